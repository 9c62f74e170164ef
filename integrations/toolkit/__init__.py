"""What the providers write once and share: a forge's sign-in calls (`oauth`), the token a
forge's job acts with (`tokens`), a JSON REST call (`http`), and the deadline and size cap every
API call is held to (`limits`, with its adapter for requests in `sessions`). It names no
provider; a provider passes its own names, URLs and quirks as values. Providers import it as
they import `resolver.contract` (which may not hold it: it imports no HTTP client), and it
imports no provider."""

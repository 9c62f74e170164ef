"""What the providers write once and share: the OAuth 2.0 calls a forge's sign-in makes
(`oauth`), the job-token classes (`tokens`) and the JSON client's plumbing. It names no
provider; a provider passes its own names, URLs and quirks as values. Providers import it as
they import `resolver.contract`, and it imports no provider."""

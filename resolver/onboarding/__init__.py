"""Setting up providers from Resolver itself (`/setup`, `resolver setup`, `resolver doctor`):
what each provider's `ProviderSetup` describes (`described`), the webhook registration every
provider with a webhook shares (`hooks`), the vault that keeps what set-up creates (`store`),
where each setting comes from (`status`), and the preflight checks. The flows and HTTP calls of
each provider live in its integration (`integrations/<name>/setup.py`)."""

"""Setting up each provider from Resolver itself (`/setup` and `resolver setup`): creating the
GitHub App and the Slack app from manifests, registering the GitLab, Jira and Linear webhooks,
rotating their secrets, and the preflight checks. What they create goes to the vault
(`store.configured`); the HTTP calls to each provider live in its integration."""

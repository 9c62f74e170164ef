"""Forgejo and Gitea: issue and pull-request comments, reviews, labels, assignments and pushes.

The webhook side (`verify`, `events`, `routes`), the REST client (`client`), the conversation
and the forge built on it (`provider`), the settings (`settings`) and the stand-in for tests
(`standin/`) are here. The descriptor (`PROVIDER`), the
sign-in, the set-up and the preflight are wired in once the provider contract takes them; until
then nothing names this package, and `integrations/registry.py` does not list it.
"""

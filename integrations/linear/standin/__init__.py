"""A local Linear for tests, speaking its API on loopback (start with `api`). Test code only:
the service never imports it."""

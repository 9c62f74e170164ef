"""Outbound: record a callback, send it with retries, the shared actions."""

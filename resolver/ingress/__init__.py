"""Inbound webhooks: verify, route, dedup, record the job, publish."""

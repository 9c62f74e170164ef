"""Celery, kombu and Redis: the app, publishing, the outbox and locks."""

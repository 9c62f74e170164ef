"""A new job's one message from intake, turned into its 👀, its job message and its first status.

Intake records a mention's job and its acknowledgements (callback rows) in one transaction and
publishes one message for them all, at the callbacks queue's first priority. Here the 👀 is sent
at once, then the job's message goes out (a worker may start), then the first status is queued
behind every waiting 👀 and ahead of every edit (`SOON`): under a burst of mentions each 👀 waits
for the others' 👀, not for their status messages. A 👀 that fails for a while is retried as
`deliver` retries a callback. Nothing is lost with the message: the reconciler sends a queued
job whose message is gone, and every callback left pending, as it always did.
"""

from __future__ import annotations

from resolver.broker.outbox import send_job_message
from resolver.broker.publish import SOON, publish_callback
from resolver.callbacks.send import acknowledgement, send
from resolver.contract.outbound import REACT, STATUS
from resolver.core.settings import Settings


def acknowledge(job_id: int, settings: Settings) -> None:
    """Send the job's pending 👀, then its job message (while it is queued and not parked),
    then queue its pending status message. A copy of the message (redelivered) sends only what
    is still pending; a second job message is harmless (a lease makes its run unique)."""
    found = acknowledgement(job_id)
    pending, message_id = found.pending, found.message_id
    for callback_id, action in pending:
        if action == REACT:
            wait = send(callback_id, settings)
            if wait is not None:  # as `deliver` retries it: after the backoff `send` computed
                publish_callback(callback_id, countdown=wait)
    if message_id:
        send_job_message(job_id, message_id)
    for callback_id, action in pending:
        if action == STATUS:
            publish_callback(callback_id, priority=SOON)

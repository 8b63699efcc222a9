"""Schema step of docs/PROTOCOL-1.2.md section 5a: the key of the call that won a claim.

A claim's answer can be lost in a crash after the claim was made durable
(kill -9 between a group commit and its replies). The claimant then retries
`task.claim_next`, which must hand back the task that call already won
rather than a second one that nobody is working on. So the claim records the
caller's `request_key` on the task row itself, in the same UPDATE that makes
the claim: no extra table, no extra index (a claim writes no page it did not
write before), and nothing to expire, since a row holds at most one key, its
current claim's. A retry finds it among the agent's live claims through the
lease index, as a heartbeat does. The PostgreSQL twin is in
`store/postgres/claim_key_schema.py`.
"""

from __future__ import annotations

CLAIM_KEY: tuple[str, ...] = ("ALTER TABLE tasks ADD COLUMN claim_key TEXT",)

"""Every feature flag `server.info.features` lists, declared once (issue 45): its name,
the protocol version that added it, and where its wire is written down (a section of
docs/PROTOCOL.md, or of docs/PROTOCOL-1.2.md with the same number).

The daemon advertises them in this order (a new flag goes last); the method table
names the flag of each method a feature brings (`method_table.FEATURE_METHODS`), and
docs/PROTOCOL.md's reference is generated from both (scripts/protocol_reference.py).
`where` is held to a section that exists and names the flag (tests/unit/test_feature_docs.py).
"""

from __future__ import annotations

from typing import NamedTuple


class Feature(NamedTuple):
    name: str
    version: str
    where: str


FEATURES: tuple[Feature, ...] = (
    Feature("deps", "1.1", "section 9: `depends_on`, `ready`, `blocked_by`"),
    Feature("assignee", "1.1", "section 9: `assignee`, `task.assign`"),
    Feature("reservations", "1.1", "section 10"),
    Feature("task_history", "1.1", "section 6: `events.since`'s `task_id`"),
    Feature("agent_release", "1.2", "section 6a (1.2 section 2)"),
    Feature("pattern_limits", "1.2", "section 10a"),
    Feature("file_edits", "1.2", "section 11"),  # issue 33
    Feature("messages", "1.2", "section 12"),  # issue 34
    Feature("release_requests", "1.2", "section 12"),
    Feature("slots", "1.2", "section 13"),  # issue 35
    Feature("landing_queue", "1.2", "section 14"),
    Feature("board_id", "1.2", "section 1b: `server.info.board_id`"),  # issue 43
    Feature("unseen_recipients", "1.2", "section 12: `never_seen`, `recipient_never_seen`"),
    Feature("claim_request_key", "1.2", "section 5a: `request_key`, `repeat`"),  # issue 44
    Feature("token_ledger", "1.2", "section 15"),  # issue 48
    Feature("token_budgets", "1.2", "section 15: `budget` on `task.post`, `usage.budget`"),
    Feature("holder_repeat", "1.2", "section 5b: `repeat` on `task.release`, `task.fail`"),
    Feature("stalled_connections", "1.2", "section 3a: `server.info.stalled`"),
    Feature("build_id", "1.2", "section 1c: `server.info.build`"),
    Feature("agent_ended", "1.2", "section 6b (1.2 section 2a): `agent.end`, `ended_at`"),
    Feature("release_reservations_of", "1.2", "section 10b: `of` on `reservation.release`"),
    Feature("reader_shares", "1.2", "section 3b: `server.info.readers`"),
    Feature("budget_notify", "1.2", "section 15: `notify` on `usage.report`"),
    Feature("urgent_lists", "1.2", "section 6c: `order`, `after_priority`, `counts`, `open_to`"),
    Feature("store_check", "1.2", "section 3c: `server.info.store.check`, `store_damaged`"),
)

#: The flags' names, in the daemon's order.
NAMES: tuple[str, ...] = tuple(feature.name for feature in FEATURES)

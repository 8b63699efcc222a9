"""Schema and forward-only migrations, versioned by `PRAGMA user_version`."""

from __future__ import annotations

import sqlite3

from coordd.store.board_schema import BOARD
from coordd.store.claim_key_schema import CLAIM_KEY
from coordd.store.edits_schema import EDITS
from coordd.store.messages_schema import TALK, UNSEEN
from coordd.store.slots_schema import SLOTS
from coordd.store.task_counts_schema import TASK_COUNTS
from coordd.store.usage_schema import USAGE

#: Performance round two (docs/PERFORMANCE.md): what a claim changes besides its
#: row. Under load a group's claims land on rows far apart, so every index a
#: claim moves an entry in costs a B-tree page of its own (a WAL frame at COMMIT):
#: 49.8 frames per group of 8 claims far apart before this step, 39.4 after
#: (the guard in tests/integration/test_hot_path_guards.py).
#: - The queue holds pending tasks only. A claim deletes its entry; it used to
#:   move it from ('pending', ...) to ('claimed', ...), two pages.
#: - One index of live claims, keyed by lease end then holder, serves the
#:   reaper (a range), heartbeats and agent.list (a scan of live claims, few
#:   on any real board); the holder index it replaces took a page per agent.
#: - Finished tasks get their own partial index, touched only when a task
#:   finishes or reopens, so the state counts stay index-only scans.
#: Each carries `state` last so that a count over it is a covering scan.
CLAIM_INDEXES: tuple[str, ...] = (
    "DROP INDEX tasks_queue",
    "CREATE INDEX tasks_pending ON tasks (priority DESC, id, state) WHERE state = 'pending'",
    "DROP INDEX tasks_holder",
    "DROP INDEX tasks_lease",
    "CREATE INDEX tasks_lease ON tasks (lease_expires_at, claimed_by, state)"
    " WHERE state = 'claimed'",
    "CREATE INDEX tasks_finished ON tasks (state) WHERE state IN ('done', 'failed', 'cancelled')",
)

#: One task's history without an index on the event log (same round): each task
#: row holds the seq of its newest event and each event the seq of its task's
#: event before it, so a history is a walk back along the chain from the task
#: (`reads.events_since`). The `events_task` index it replaces took a page per
#: event on claims far apart: 39.4 WAL frames per group of 8 before, 31.0
#: after. The backfill links the events stored so far.
EVENT_CHAIN: tuple[str, ...] = (
    "ALTER TABLE tasks ADD COLUMN event_seq INTEGER",
    "ALTER TABLE events ADD COLUMN prev_seq INTEGER",
    "UPDATE tasks SET event_seq = (SELECT max(seq) FROM events WHERE events.task_id = tasks.id)",
    "UPDATE events SET prev_seq = (SELECT max(older.seq) FROM events AS older"
    " WHERE older.task_id = events.task_id AND older.seq < events.seq)",
    "DROP INDEX events_task",
)

#: An agent's reported end (docs/PROTOCOL-1.2.md section 2a): set by `agent.end`,
#: cleared by the agent's own next call (`Txn.touch_agent`).
AGENT_ENDED: tuple[str, ...] = ("ALTER TABLE agents ADD COLUMN ended_at TEXT",)

# Each entry migrates from version i to i + 1. Append only; never edit a shipped step.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        # AUTOINCREMENT: ids and event seqs are never reused, even after deletes.
        """CREATE TABLE tasks (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            project TEXT NOT NULL,
            kind TEXT NOT NULL,
            title TEXT NOT NULL,
            body TEXT NOT NULL,
            state TEXT NOT NULL
                CHECK (state IN ('pending', 'claimed', 'done', 'failed', 'cancelled')),
            priority INTEGER NOT NULL,
            tags TEXT NOT NULL,            -- JSON array of strings
            created_by TEXT,
            created_at TEXT NOT NULL,      -- RFC 3339, fixed width: sorts as time
            updated_at TEXT NOT NULL,
            claimed_by TEXT,
            claimed_at TEXT,
            lease_expires_at TEXT,
            fence INTEGER NOT NULL DEFAULT 0,
            attempts INTEGER NOT NULL DEFAULT 0,
            result TEXT,
            idempotency_key TEXT,
            posted_id INTEGER,             -- the then_post of the completing call
            CHECK ((state = 'claimed') = (lease_expires_at IS NOT NULL)),
            CHECK (state <> 'pending' OR claimed_by IS NULL)
        )""",
        """CREATE UNIQUE INDEX tasks_idempotency ON tasks (project, idempotency_key)
            WHERE idempotency_key IS NOT NULL""",
        # claim_next: highest priority, then lowest id, among claimable rows.
        "CREATE INDEX tasks_queue ON tasks (state, priority DESC, id)",
        "CREATE INDEX tasks_lease ON tasks (lease_expires_at) WHERE state = 'claimed'",
        "CREATE INDEX tasks_holder ON tasks (claimed_by) WHERE claimed_by IS NOT NULL",
        "CREATE INDEX tasks_project ON tasks (project, id)",
        """CREATE TABLE events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            type TEXT NOT NULL,
            project TEXT NOT NULL,
            at TEXT NOT NULL,
            data TEXT NOT NULL             -- the event exactly as sent on the wire
        )""",
        """CREATE TABLE agents (
            agent TEXT PRIMARY KEY,
            last_seen TEXT NOT NULL
        ) WITHOUT ROWID""",
    ),
    (
        # Protocol 1.1. One task's history (`events.since` with `task_id`)
        # without scanning the whole log: the id gets a column and an index.
        "ALTER TABLE events ADD COLUMN task_id INTEGER",
        "UPDATE events SET task_id = json_extract(data, '$.task_id')",
        "CREATE INDEX events_task ON events (task_id, seq)",
        # Dependencies (PROTOCOL.md section 9): the ids as posted (a JSON array,
        # sorted), how many of them are not done yet (0: not blocked, so a
        # plain task never reads another row), and the reverse edges that a
        # completion or a reopen walks to find its dependents.
        "ALTER TABLE tasks ADD COLUMN depends_on TEXT NOT NULL DEFAULT '[]'",
        "ALTER TABLE tasks ADD COLUMN open_deps INTEGER NOT NULL DEFAULT 0",
        """CREATE TABLE task_deps (
            dependency INTEGER NOT NULL,
            dependent INTEGER NOT NULL,
            PRIMARY KEY (dependency, dependent)
        ) WITHOUT ROWID""",
        # Assignment: the one agent who may claim the task.
        "ALTER TABLE tasks ADD COLUMN assignee TEXT",
        "CREATE INDEX tasks_assignee ON tasks (assignee, id) WHERE assignee IS NOT NULL",
    ),
    (
        # Reservations (PROTOCOL.md section 10). `prefix` is the pattern's
        # literal leading segments, each followed by `/` (coordd/patterns.py):
        # a pattern covering a path has one of the path's few leading runs as
        # its prefix, so a check is a handful of index lookups, however many
        # reservations there are.
        """CREATE TABLE reservations (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            project TEXT NOT NULL,
            agent TEXT NOT NULL,
            pattern TEXT NOT NULL,
            prefix TEXT NOT NULL,
            exclusive INTEGER NOT NULL,
            reason TEXT,
            task_id INTEGER,               -- ends when this task leaves `claimed`
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            ttl_s REAL NOT NULL
        )""",
        "CREATE UNIQUE INDEX reservations_held ON reservations (project, agent, pattern)",
        "CREATE INDEX reservations_prefix ON reservations (project, prefix)",
        "CREATE INDEX reservations_agent ON reservations (agent)",
        "CREATE INDEX reservations_task ON reservations (task_id) WHERE task_id IS NOT NULL",
        "CREATE INDEX reservations_expiry ON reservations (expires_at)",
    ),
    CLAIM_INDEXES,
    EVENT_CHAIN,
    EDITS,  # 1.2 section 11: recorded edits (issue 33)
    TALK,  # issue 34: messages and release requests
    SLOTS,  # issue 35: slot leases and the landing queue
    BOARD,  # issue 43: the board's id (docs/PROTOCOL-1.2.md section 1b)
    UNSEEN,  # issue 44: messages to names never seen, marked for their cap and retention
    CLAIM_KEY,  # issue 44 item 7: a claim's request_key (section 5a)
    USAGE,  # issue 48: the token ledger (docs/PROTOCOL-1.2.md section 15)
    AGENT_ENDED,  # an agent's reported end (docs/PROTOCOL-1.2.md section 2a)
    TASK_COUNTS,  # each project's tasks by state, kept by triggers (server.info's counts)
)

SCHEMA_VERSION = len(MIGRATIONS)


class SchemaTooNew(Exception):
    """The database was written by a newer coordd."""


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the schema up to date inside one IMMEDIATE transaction; return the version."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version > SCHEMA_VERSION:
            raise SchemaTooNew(
                f"database schema version {version} is newer than this coordd "
                f"understands ({SCHEMA_VERSION}); upgrade coordd"
            )
        for step in MIGRATIONS[version:]:
            for statement in step:
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return SCHEMA_VERSION

"""Schema step of docs/PROTOCOL-1.2.md section 15 (issue 48): the token ledger.

One named step, appended to `schema.MIGRATIONS` (its PostgreSQL twin is
`store/postgres/usage_schema.py`). Two tables: `usage_entries`, the facts as
reported, one row per model call, whose primary key (host, entry_id) is what
makes a report sent twice count once; and `usage_charges`, what each entry was
charged to (a task, or NULL: unattributed), written once, at report time, from
who held what then (`store/attribution.py`). No claim statement touches either.
Neither is trimmed by event retention: a row per model call is small, and a
task's cost must outlive its events.
"""

from __future__ import annotations

USAGE: tuple[str, ...] = (
    """CREATE TABLE usage_entries (
        host TEXT NOT NULL,
        entry_id TEXT NOT NULL,
        agent TEXT NOT NULL,
        session TEXT,
        project TEXT NOT NULL,
        model TEXT NOT NULL,
        at TEXT NOT NULL,              -- when spent, normalised to format_time
        input INTEGER NOT NULL,
        output INTEGER NOT NULL,
        cache_creation INTEGER NOT NULL,
        cache_read INTEGER NOT NULL,
        reported_at TEXT NOT NULL,
        PRIMARY KEY (host, entry_id)
    ) WITHOUT ROWID""",
    """CREATE TABLE usage_charges (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        host TEXT NOT NULL,
        entry_id TEXT NOT NULL,
        task_id INTEGER,               -- NULL: unattributed (its agent held nothing)
        project TEXT NOT NULL,         -- the task's; the report's when unattributed
        agent TEXT NOT NULL,
        model TEXT NOT NULL,
        at TEXT NOT NULL,
        input INTEGER NOT NULL,
        output INTEGER NOT NULL,
        cache_creation INTEGER NOT NULL,
        cache_read INTEGER NOT NULL
    )""",
    "CREATE INDEX usage_charges_task ON usage_charges (task_id) WHERE task_id IS NOT NULL",
    "CREATE INDEX usage_charges_project ON usage_charges (project, at)",
    "CREATE INDEX usage_charges_agent ON usage_charges (agent, at)",
    # A task's token budget (`task.post`'s `budget`), and the highest threshold
    # (80, 100) a `usage.budget` event has said it crossed, so each is said once.
    """CREATE TABLE task_budgets (
        task_id INTEGER PRIMARY KEY,
        tokens INTEGER NOT NULL,
        warned INTEGER NOT NULL DEFAULT 0,
        release INTEGER NOT NULL DEFAULT 0   -- 1: at 100% the holder's claim is released
    )""",
)

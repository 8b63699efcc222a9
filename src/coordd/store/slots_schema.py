"""Schema step of docs/PROTOCOL-1.2.md sections 13 and 14: slot leases and the landing queue.

One named step, appended to `schema.MIGRATIONS` (its PostgreSQL twin is
`store/postgres/slots_schema.py`). Neither table is touched by a claim,
a claim_next or a heartbeat: a lease's renewal by heartbeat is read from
the agent's last-seen (`store/slots.py`), not written to these rows.
"""

from __future__ import annotations

SLOTS: tuple[str, ...] = (
    # One row per grant. `capacity` is NULL for a port lease, `port` NULL for a
    # slot; the id is the grant's fence (ascending, never reused).
    """CREATE TABLE slot_leases (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project TEXT NOT NULL,
        name TEXT NOT NULL,
        agent TEXT NOT NULL,
        capacity INTEGER,
        port INTEGER,
        task_id INTEGER,               -- ends when this task leaves `claimed`
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        ttl_s REAL NOT NULL
    )""",
    "CREATE UNIQUE INDEX slot_leases_held ON slot_leases (project, name, agent)",
    "CREATE INDEX slot_leases_agent ON slot_leases (agent)",
    "CREATE INDEX slot_leases_port ON slot_leases (port) WHERE port IS NOT NULL",
    "CREATE INDEX slot_leases_expiry ON slot_leases (expires_at)",
    # The landing queue: one row per branch that joined it; `paths` is the JSON
    # array of paths the branch changes against its merge base.
    """CREATE TABLE landings (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project TEXT NOT NULL,
        onto TEXT NOT NULL,
        branch TEXT NOT NULL,
        agent TEXT NOT NULL,
        task_id INTEGER,
        state TEXT NOT NULL CHECK (state IN ('queued', 'landing', 'landed', 'failed')),
        paths TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        ttl_s REAL NOT NULL,
        lease_id INTEGER,
        reason TEXT,
        landed_commit TEXT
    )""",
    "CREATE INDEX landings_queue ON landings (project, onto, id)"
    " WHERE state IN ('queued', 'landing')",
)

"""The schema step of 1.2 section 12 (messages and release requests), SQLite's flavour.

A message is a row of `messages` and an event in the log (`message.sent`): the
row is the durable record (event retention never trims it), the event orders
it and wakes waiters. Who must read it is fixed when it is sent, one row of
`message_recipients` each, keyed by agent first, so an inbox is one range
scan; `message_cursors` keeps each agent's acknowledgement, so what it has
read survives a restart and nothing is delivered twice. Release requests are
messages of kind `request` with their columns filled. None of these tables
is touched by a claim, a heartbeat or a reap.
"""

from __future__ import annotations

#: Columns shared by both stores (the PostgreSQL twin is in `store/postgres/messages_schema.py`).
TALK: tuple[str, ...] = (
    """CREATE TABLE messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project TEXT NOT NULL,
        sender TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('message', 'question', 'request', 'answer')),
        audience TEXT NOT NULL CHECK (audience IN ('agent', 'project', 'task')),
        to_agent TEXT,
        task_id INTEGER,
        reply_to INTEGER,
        body TEXT NOT NULL,
        created_at TEXT NOT NULL,
        seq INTEGER NOT NULL,          -- its message.sent event
        idempotency_key TEXT,
        answer_id INTEGER,             -- a question's or request's first answer
        patterns TEXT,                 -- a request: the patterns asked for (JSON)
        claim_id INTEGER,              -- a request: the claimed task asked for
        expires_at TEXT,               -- a request: unanswered until then
        status TEXT CHECK (status IN ('open', 'approved', 'denied', 'narrowed')),
        granted TEXT,                  -- an approve or narrow: the patterns handed over
        reason TEXT                    -- the answer's reason
    )""",
    """CREATE UNIQUE INDEX messages_idempotency ON messages (project, idempotency_key)
        WHERE idempotency_key IS NOT NULL""",
    "CREATE INDEX messages_task ON messages (task_id, id) WHERE task_id IS NOT NULL",
    """CREATE TABLE message_recipients (
        agent TEXT NOT NULL,
        message_id INTEGER NOT NULL,
        PRIMARY KEY (agent, message_id)
    ) WITHOUT ROWID""",
    """CREATE TABLE message_cursors (
        agent TEXT PRIMARY KEY,
        read_id INTEGER NOT NULL
    ) WITHOUT ROWID""",
)

#: Issue 44: messages to a name nobody uses were kept forever. A recipient row
#: the daemon wrote for a name it had never seen carries the time it was sent
#: (`unseen_since`), NULL otherwise; the partial index holds only those rows, so
#: the cap on all never-seen inboxes and their retention read a few hundred
#: entries, never the whole table. The backfill marks the rows already kept
#: for names still never seen, so what a typo stored before this step expires too.
UNSEEN: tuple[str, ...] = (
    "ALTER TABLE message_recipients ADD COLUMN unseen_since TEXT",
    """CREATE INDEX message_recipients_unseen ON message_recipients (unseen_since)
        WHERE unseen_since IS NOT NULL""",
    """UPDATE message_recipients SET unseen_since = (
        SELECT created_at FROM messages WHERE messages.id = message_recipients.message_id)
        WHERE agent NOT IN (SELECT agent FROM agents)""",
)

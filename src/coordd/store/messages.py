"""Messages (1.2 section 12): send, read, acknowledge, get; the rows and the event.

Every function is written once against `sql.Db`, like the rest of the store,
so team mode runs the same statements. A message is inserted, its recipients
fixed (one row each), and its `message.sent` event appended in the sender's
one write transaction: a reader sees the message and its recipients together
or not at all, and the event's seq orders it in the log. Nothing here runs
in a claim's, a heartbeat's or the reaper's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from coordd.clock import format_time
from coordd.store import messages_unseen
from coordd.store.agent_ends import ended_among
from coordd.store.reservation_rows import LIVE
from coordd.store.sql import Db
from coordd.store.transaction import Txn, encoder, require_row
from coordd_wire import params_messages as T
from coordd_wire.errors import InvalidParams, NotFound
from coordd_wire.wire import LIVE_HORIZON
from coordd_wire.wire_messages import (
    AckResult,
    InboxResult,
    Message,
    MessageResult,
    RequestState,
    SendResult,
)

#: The event type of every message, question, request and answer.
MESSAGE_SENT = "message.sent"

COLUMNS = (
    "id, project, sender, kind, audience, to_agent, task_id, reply_to, body, created_at,"
    " seq, answer_id, patterns, claim_id, expires_at, status, granted, reason"
)
_KEYS = COLUMNS.replace(" ", "").split(",")


def as_wire(values: Sequence[Any], now: str) -> Message:
    """A `messages` row as the wire's Message object (docs/PROTOCOL-1.2.md section 12)."""
    row = dict(zip(_KEYS, values, strict=True))
    request = None
    if row["kind"] == "request":
        status = row["status"]
        if status == "open" and row["expires_at"] <= now:
            status = "expired"
        request = RequestState(
            holder=row["to_agent"],
            patterns=None if row["patterns"] is None else msgspec.json.decode(row["patterns"]),
            task_id=row["claim_id"],
            status=status,
            expires_at=row["expires_at"],
            granted=None if row["granted"] is None else msgspec.json.decode(row["granted"]),
            reason=row["reason"],
        )
        is_open = status == "open"
    else:
        is_open = row["kind"] == "question" and row["answer_id"] is None
    return Message(
        id=row["id"],
        project=row["project"],
        sender=row["sender"],
        kind=row["kind"],
        audience=row["audience"],
        to=row["to_agent"],
        task_id=row["task_id"],
        reply_to=row["reply_to"],
        body=row["body"],
        created_at=row["created_at"],
        seq=row["seq"],
        answer_id=row["answer_id"],
        open=is_open,
        request=request,
    )


def message_row(conn: Db, message_id: int) -> tuple[Any, ...] | None:
    rows = conn.execute(f"SELECT {COLUMNS} FROM messages WHERE id = ?", (message_id,)).fetchall()
    return tuple(rows[0]) if rows else None


def require_message(conn: Db, message_id: int, now: str) -> Message:
    row = message_row(conn, message_id)
    if row is None:
        raise NotFound(f"no message with id {message_id}", id=message_id)
    return as_wire(row, now)


def recipients_of(conn: Db, message_id: int) -> list[str]:
    return [
        agent
        for (agent,) in conn.execute(
            "SELECT agent FROM message_recipients WHERE message_id = ? ORDER BY agent",
            (message_id,),
        ).fetchall()
    ]


def by_key(tx: Txn, project: str, key: str | None) -> Message | None:
    """The message a repeated idempotency key already sent (as `task.post`'s keys)."""
    if key is None:
        return None
    rows = tx.conn.execute(
        f"SELECT {COLUMNS} FROM messages WHERE project = ? AND idempotency_key = ?",
        (project, key),
    ).fetchall()
    return as_wire(rows[0], tx.now_text) if rows else None


# --- who receives --------------------------------------------------------------


def project_audience(tx: Txn, project: str) -> list[str]:
    """Every live agent of `project`: its holders (a live claim or reservation), and
    the agents seen lately that posted, hold, are assigned or spoke in it."""
    args = {
        "project": project,
        "now": tx.now_text,
        "horizon": format_time(tx.now - LIVE_HORIZON),
    }
    rows = tx.conn.execute(
        "SELECT claimed_by FROM tasks WHERE project = :project AND state = 'claimed'"
        " AND lease_expires_at > :now"
        f" UNION SELECT r.agent FROM reservations AS r WHERE r.project = :project AND {LIVE}"
        " UNION SELECT agent FROM agents WHERE last_seen > :horizon AND agent IN ("
        " SELECT created_by FROM tasks WHERE project = :project"
        " UNION SELECT assignee FROM tasks WHERE project = :project"
        " UNION SELECT sender FROM messages WHERE project = :project)",
        args,
    ).fetchall()
    return sorted({agent for (agent,) in rows if agent is not None})


def thread_audience(tx: Txn, task_id: int) -> list[str]:
    """Everyone on task `task_id`'s thread: its creator, holder and assignee, and
    everyone who has spoken on it."""
    task = msgspec.json.decode(require_row(tx.conn, task_id).json)
    names = {task["created_by"], task["claimed_by"], task["assignee"]}
    for (sender,) in tx.conn.execute(
        "SELECT DISTINCT sender FROM messages WHERE task_id = ?", (task_id,)
    ).fetchall():
        names.add(sender)
    return sorted(name for name in names if name is not None)


# --- writing ---------------------------------------------------------------------


def insert_message(
    tx: Txn,
    *,
    project: str,
    sender: str,
    kind: str,
    audience: str,
    recipients: list[str],
    body: str,
    to: str | None = None,
    task_id: int | None = None,
    reply_to: int | None = None,
    key: str | None = None,
    request: dict[str, Any] | None = None,
    unseen: frozenset[str] = frozenset(),
) -> Message:
    """Store one message with its recipients and append its `message.sent` event.

    The rows of `unseen` recipients (names never seen, `messages_unseen`) are marked
    with the time, so the retention duty can end them if the name stays unused."""
    request = request or {}
    seq = tx.next_seq  # the event appended below takes it
    (values,) = tx.conn.execute(
        "INSERT INTO messages (project, sender, kind, audience, to_agent, task_id, reply_to,"
        " body, created_at, seq, idempotency_key, patterns, claim_id, expires_at, status)"
        f" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING {COLUMNS}",
        (
            project, sender, kind, audience, to, task_id, reply_to, body, tx.now_text, seq,
            key, request.get("patterns"), request.get("claim_id"), request.get("expires_at"),
            "open" if request else None,
        ),
    ).fetchall()  # fmt: skip
    message = as_wire(values, tx.now_text)
    recipients = [name for name in dict.fromkeys(recipients) if name != sender]
    tx.conn.executemany(
        "INSERT INTO message_recipients (agent, message_id, unseen_since) VALUES (?, ?, ?)",
        [(name, message.id, tx.now_text if name in unseen else None) for name in recipients],
    )
    emit_message(tx, message, recipients)
    tx.touch_agent(sender)
    return message


class _MessageEvent(msgspec.Struct, kw_only=True):
    seq: int
    at: str
    type: str
    task_id: int | None
    agent: str
    message: Message
    recipients: list[str]


def emit_message(tx: Txn, message: Message, recipients: list[str]) -> None:
    """Append `message.sent`. It has no `task` member (a message changes no task), so
    `task.wait` never matches it. On a task's thread it joins that task's history
    chain (`events.since` with `task_id`)."""
    task_id = message.task_id
    prev_seq = None
    if task_id is not None:
        (prev_seq,) = tx.conn.execute(
            "SELECT event_seq FROM tasks WHERE id = ?", (task_id,)
        ).fetchone()
    tx.emit_untasked(
        MESSAGE_SENT,
        message.project,
        lambda seq: encoder.encode(
            _MessageEvent(
                seq=seq, at=tx.now_text, type=MESSAGE_SENT, task_id=task_id,
                agent=message.sender, message=message, recipients=recipients,
            )
        ),
        task_id=task_id,
        prev_seq=prev_seq,
    )  # fmt: skip


def send(tx: Txn, p: T.SendParams) -> SendResult:
    """`message.send`: to `to`; else the thread of `task_id`; else a reply goes to the
    sender of `reply_to`; else every live agent of the project."""
    repeat = by_key(tx, p.project, p.idempotency_key)
    if repeat is not None:
        recipients = recipients_of(tx.conn, repeat.id)
        return SendResult(
            message=repeat,
            created=False,
            recipients=recipients,
            never_seen=sorted(messages_unseen.never_seen(tx.conn, recipients)),
            ended=ended_among(tx.conn, recipients),
        )
    parent = None
    if p.reply_to is not None:
        parent = require_message(tx.conn, p.reply_to, tx.now_text)
        if parent.project != p.project:
            raise InvalidParams(
                f"message {p.reply_to} is in project {parent.project!r}, not {p.project!r}"
                " - at `$.reply_to`",
                field="reply_to",
            )
    task_id = p.task_id if p.task_id is not None else (parent.task_id if parent else None)
    field: str | None = None  # the param that named the one recipient, if one did
    if p.to is not None:
        audience, recipients, to, field = "agent", [p.to], p.to, "to"
    elif p.task_id is not None:
        audience, recipients, to = "task", thread_audience(tx, p.task_id), None
    elif parent is not None:
        to = parent.sender if parent.sender != p.agent else parent.to
        audience, recipients, field = "agent", [] if to is None else [to], "reply_to"
    else:
        audience, recipients, to = "project", project_audience(tx, p.project), None
    if task_id is not None and p.task_id is None and audience != "task":
        require_row(tx.conn, task_id)
    recipients = [name for name in dict.fromkeys(recipients) if name != p.agent]
    recipients, unseen = messages_unseen.admit(tx, p.agent, recipients, field)
    message = insert_message(
        tx, project=p.project, sender=p.agent, kind=p.kind or "message", audience=audience,
        recipients=recipients, body=p.body, to=to, task_id=task_id, reply_to=p.reply_to,
        key=p.idempotency_key, unseen=unseen,
    )  # fmt: skip
    if parent is not None and parent.kind == "question" and parent.sender != p.agent:
        # A question is open until someone else answers it: the first reply does.
        tx.conn.execute(
            "UPDATE messages SET answer_id = ? WHERE id = ? AND answer_id IS NULL",
            (message.id, parent.id),
        )
    return SendResult(
        message=message,
        created=True,
        recipients=recipients,
        never_seen=sorted(unseen),
        ended=ended_among(tx.conn, recipients),
    )


def ack(tx: Txn, p: T.AckParams) -> AckResult:
    """`message.ack`: move the agent's cursor up to `up_to` (never back)."""
    (newest,) = tx.conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()
    if p.up_to > newest:
        raise InvalidParams(
            f"`up_to` {p.up_to} is past the newest message ({newest}) - at `$.up_to`",
            field="up_to",
        )
    tx.conn.execute(
        "INSERT INTO message_cursors (agent, read_id) VALUES (?, ?) ON CONFLICT (agent)"
        " DO UPDATE SET read_id = CASE WHEN excluded.read_id > message_cursors.read_id"
        " THEN excluded.read_id ELSE message_cursors.read_id END",
        (p.agent, p.up_to),
    )
    tx.touch_agent(p.agent)
    return AckResult(cursor=cursor_of(tx.conn, p.agent))


# --- reading ---------------------------------------------------------------------


def cursor_of(conn: Db, agent: str) -> int:
    rows = conn.execute("SELECT read_id FROM message_cursors WHERE agent = ?", (agent,)).fetchall()
    return int(rows[0][0]) if rows else 0


def read(conn: Db, now: str, p: T.ReadParams | T.MessageWaitParams) -> InboxResult:
    """`message.read`: the agent's messages after its cursor (or `after_id`), oldest first."""
    cursor = cursor_of(conn, p.agent)
    after = cursor if p.after_id is None else p.after_id
    limit = getattr(p, "limit", None) or T.DEFAULT_MESSAGE_LIMIT
    rows = conn.execute(
        f"SELECT {', '.join('m.' + key for key in _KEYS)} FROM message_recipients AS mr"
        " JOIN messages AS m ON m.id = mr.message_id"
        " WHERE mr.agent = ? AND mr.message_id > ? ORDER BY mr.message_id LIMIT ?",
        (p.agent, after, limit + 1),
    ).fetchall()
    messages = [as_wire(values, now) for values in rows[:limit]]
    return InboxResult(messages=messages, cursor=cursor, more=len(rows) > limit)


def get(conn: Db, now: str, p: T.MessageGetParams) -> MessageResult:
    """`message.get`: one message as it stands (a request's status, a question's answer)."""
    return MessageResult(
        message=require_message(conn, p.id, now), recipients=recipients_of(conn, p.id)
    )

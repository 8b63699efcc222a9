"""Pure synchronous SQL: every read and every state transition of PROTOCOL.md section 5.

Write functions take a `Txn` and run inside the writer thread's transaction;
read functions take a reader connection. Tasks leave SQLite already encoded
as JSON (`json_object`), so the hot path never builds a Python dict per row.
Each write appends its events to the `events` table in the same transaction.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, NamedTuple

import msgspec

from coordd.clock import format_time
from coordd.protocol import params as P
from coordd_client.protocol.errors import Conflict, InvalidParams, LeaseLost, NotFound
from coordd_client.protocol.wire import STATES

TASK_JSON = (
    "json_object('id', id, 'project', project, 'kind', kind, 'title', title, 'body', body,"
    " 'state', state, 'priority', priority, 'tags', json(tags), 'created_by', created_by,"
    " 'created_at', created_at, 'updated_at', updated_at, 'claimed_by', claimed_by,"
    " 'claimed_at', claimed_at, 'lease_expires_at', lease_expires_at, 'fence', fence,"
    " 'attempts', attempts, 'result', result)"
)
ROW_COLUMNS = f"id, project, state, claimed_by, lease_expires_at, fence, posted_id, {TASK_JSON}"
LIVE_HOLDER = (
    "id = :id AND state = 'claimed' AND claimed_by = :agent AND lease_expires_at > :now"
    " AND (:fence IS NULL OR fence = :fence)"
)
CLEAR_CLAIM = "claimed_by = NULL, claimed_at = NULL, lease_expires_at = NULL"


class TaskRow(NamedTuple):
    """The columns the daemon's logic needs, plus the task's wire JSON."""

    id: int
    project: str
    state: str
    claimed_by: str | None
    lease_expires_at: str | None
    fence: int
    posted_id: int | None
    json: str

    @property
    def raw(self) -> msgspec.Raw:
        return msgspec.Raw(self.json)


class CommittedEvent(NamedTuple):
    """An event appended by a transaction; published only after COMMIT returns."""

    seq: int
    type: str
    project: str
    task_json: str
    data: bytes


class _EventOut(msgspec.Struct, kw_only=True):
    seq: int
    at: str
    type: str
    task_id: int
    agent: str | None
    task: msgspec.Raw


_encoder = msgspec.json.Encoder()

# The writer remembers when it last recorded each agent as seen, so that a
# busy agent costs one `agents` write a second, not one per claim.
AGENT_SEEN_RESOLUTION = timedelta(seconds=1)
AGENT_SEEN_CACHE_MAX = 10_000


# The writer gives every command of a batch the same instant, so a batch of
# claims formats its `now` and its default lease end once, not once per claim:
# formatting was the largest piece of the writer's own Python per claim.
_format_instant = functools.lru_cache(maxsize=64)(format_time)


@dataclass
class Txn:
    """What one write command sees: the connection, its instant, and its events."""

    conn: sqlite3.Connection
    now: datetime
    agents_seen: dict[str, datetime]
    next_seq: int
    events: list[CommittedEvent] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.now_text = _format_instant(self.now)

    def lease_until(self, lease_s: float | None) -> str:
        seconds = P.DEFAULT_LEASE_S if lease_s is None else lease_s
        return _format_instant(self.now + timedelta(seconds=seconds))

    def emit(self, event_type: str, row: TaskRow, agent: str | None) -> None:
        # The writer is the only writer, so it numbers events itself (gap-free in
        # commit order); it restores `next_seq` when a command rolls back.
        seq = self.next_seq
        self.next_seq += 1
        data = _encoder.encode(
            _EventOut(
                seq=seq,
                at=self.now_text,
                type=event_type,
                task_id=row.id,
                agent=agent,
                task=row.raw,
            )
        )
        self.conn.execute(
            "INSERT INTO events (seq, type, project, at, data) VALUES (?, ?, ?, ?, ?)",
            (seq, event_type, row.project, self.now_text, data.decode()),
        )
        self.events.append(CommittedEvent(seq, event_type, row.project, row.json, data))

    def touch_agent(self, agent: str | None, *, force: bool = False) -> None:
        if agent is None:
            return
        last = self.agents_seen.get(agent)
        if not force and last is not None and self.now - last < AGENT_SEEN_RESOLUTION:
            return
        self.conn.execute(
            "INSERT INTO agents (agent, last_seen) VALUES (?, ?)"
            " ON CONFLICT (agent) DO UPDATE SET last_seen = excluded.last_seen",
            (agent, self.now_text),
        )
        if len(self.agents_seen) >= AGENT_SEEN_CACHE_MAX:
            self.agents_seen.clear()
        self.agents_seen[agent] = self.now


def _one(
    conn: sqlite3.Connection, sql: str, args: Sequence[Any] | dict[str, Any]
) -> TaskRow | None:
    # fetchall, not fetchone: it steps RETURNING statements to completion so no
    # statement is left open across RELEASE/COMMIT.
    rows = conn.execute(sql, args).fetchall()
    return TaskRow(*rows[0]) if rows else None


def get_row(conn: sqlite3.Connection, task_id: int) -> TaskRow | None:
    return _one(conn, f"SELECT {ROW_COLUMNS} FROM tasks WHERE id = ?", (task_id,))


def _require(conn: sqlite3.Connection, task_id: int) -> TaskRow:
    row = get_row(conn, task_id)
    if row is None:
        raise NotFound(f"no task with id {task_id}", id=task_id)
    return row


def _dedupe(tags: list[str] | None) -> list[str]:
    return list(dict.fromkeys(tags or ()))


def _in_list(prefix: str, values: Sequence[str], args: dict[str, Any]) -> str:
    """`(:prefix0, :prefix1, ...)`, binding each value in `args`: no SQL built from input."""
    names = []
    for index, value in enumerate(values):
        names.append(f":{prefix}{index}")
        args[f"{prefix}{index}"] = value
    return f"({', '.join(names)})"


# --- writes -------------------------------------------------------------------


def post_task(tx: Txn, p: P.PostParams) -> dict[str, Any]:
    row, created = _post(tx, p)
    return {"task": row.raw, "created": created}


def _post(tx: Txn, p: P.PostParams, fallback_agent: str | None = None) -> tuple[TaskRow, bool]:
    """Insert a task (or find the one its idempotency key already names)."""
    project = p.project or P.DEFAULT_PROJECT
    agent = p.agent or fallback_agent
    if p.idempotency_key is not None:
        existing = _one(
            tx.conn,
            f"SELECT {ROW_COLUMNS} FROM tasks WHERE project = ? AND idempotency_key = ?",
            (project, p.idempotency_key),
        )
        if existing is not None:
            return existing, False
    row = _one(
        tx.conn,
        "INSERT INTO tasks (project, kind, title, body, state, priority, tags, created_by,"
        " created_at, updated_at, idempotency_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        f" RETURNING {ROW_COLUMNS}",
        (
            project,
            p.kind or P.DEFAULT_KIND,
            p.title,
            p.body or "",
            p.state or "pending",
            p.priority or 0,
            _encoder.encode(_dedupe(p.tags)).decode(),
            agent,
            tx.now_text,
            tx.now_text,
            p.idempotency_key,
        ),
    )
    assert row is not None
    tx.emit("task.posted", row, agent)
    tx.touch_agent(agent)
    return row, True


def _expire(tx: Txn, row: TaskRow) -> TaskRow:
    """Return one expired claim to pending, emitting `task.expired` for its old holder."""
    expired = _one(
        tx.conn,
        f"UPDATE tasks SET state = 'pending', {CLEAR_CLAIM}, updated_at = ? WHERE id = ?"
        f" RETURNING {ROW_COLUMNS}",
        (tx.now_text, row.id),
    )
    assert expired is not None
    tx.emit("task.expired", expired, row.claimed_by)
    return expired


_CLAIM_PENDING = (
    "UPDATE tasks SET state = 'claimed', claimed_by = :agent, claimed_at = :now,"
    " lease_expires_at = :until, updated_at = :now, fence = fence + 1, attempts = attempts + 1"
    f" WHERE id = :id AND state = 'pending' RETURNING {ROW_COLUMNS}"
)


def claim_task(tx: Txn, p: P.ClaimParams) -> dict[str, Any]:
    """The core primitive: one conditional UPDATE decides the single winner."""
    args = {"agent": p.agent, "now": tx.now_text, "until": tx.lease_until(p.lease_s), "id": p.id}
    row = _one(tx.conn, _CLAIM_PENDING, args)
    if row is None:
        current = _require(tx.conn, p.id)
        if current.state != "claimed":
            tx.touch_agent(p.agent)
            return {"won": False, "task": current.raw}
        assert current.lease_expires_at is not None
        if current.lease_expires_at <= tx.now_text:
            _expire(tx, current)
            row = _one(tx.conn, _CLAIM_PENDING, args)
        elif current.claimed_by == p.agent:
            # The holder retrying (it may have lost our reply): same fence, lease renewed.
            renewed = _one(
                tx.conn,
                "UPDATE tasks SET lease_expires_at = :until, updated_at = :now WHERE id = :id"
                f" RETURNING {ROW_COLUMNS}",
                args,
            )
            assert renewed is not None
            tx.touch_agent(p.agent)
            return {"won": True, "task": renewed.raw}
        else:
            tx.touch_agent(p.agent)
            return {"won": False, "task": current.raw}
    assert row is not None
    tx.emit("task.claimed", row, p.agent)
    tx.touch_agent(p.agent)
    return {"won": True, "task": row.raw}


def reap_expired(tx: Txn) -> int:
    """Return every expired claim to pending in one statement; one `task.expired` each.

    Without ANALYZE statistics SQLite answers "state = 'claimed' AND ..." from
    tasks_queue (state, ...), scanning every claimed task; this, the restart
    grace, heartbeat and agent.list name their partial index (INDEXED BY).
    """
    holders = dict(
        tx.conn.execute(
            "SELECT id, claimed_by FROM tasks INDEXED BY tasks_lease"
            " WHERE state = 'claimed' AND lease_expires_at <= ?",
            (tx.now_text,),
        ).fetchall()
    )
    if not holders:
        return 0
    rows = tx.conn.execute(
        f"UPDATE tasks INDEXED BY tasks_lease SET state = 'pending', {CLEAR_CLAIM},"
        f" updated_at = :now WHERE state = 'claimed' AND lease_expires_at <= :now"
        f" RETURNING {ROW_COLUMNS}",
        {"now": tx.now_text},
    ).fetchall()
    for values in sorted(rows):
        row = TaskRow(*values)
        tx.emit("task.expired", row, holders.get(row.id))
    return len(rows)


def claim_next(tx: Txn, p: P.ClaimNextParams) -> dict[str, Any]:
    """Claim the best claimable match: highest priority, then lowest id."""
    reap_expired(tx)
    where = ["state = 'pending'"]
    args: dict[str, Any] = {}
    if p.project is not None:
        where.append("project = :project")
        args["project"] = p.project
    if p.kind is not None:
        where.append("kind = :kind")
        args["kind"] = p.kind
    wanted = _dedupe(p.tags)
    if wanted:
        where.append(
            "(SELECT count(DISTINCT value) FROM json_each(tasks.tags)"
            f" WHERE value IN {_in_list('tag', wanted, args)}) = {len(wanted)}"
        )
    found = tx.conn.execute(
        f"SELECT id FROM tasks WHERE {' AND '.join(where)} ORDER BY priority DESC, id LIMIT 1",
        args,
    ).fetchall()
    tx.touch_agent(p.agent)
    if not found:
        return {"task": None}
    claim_args = {
        "agent": p.agent,
        "now": tx.now_text,
        "until": tx.lease_until(p.lease_s),
        "id": found[0][0],
    }
    row = _one(tx.conn, _CLAIM_PENDING, claim_args)
    assert row is not None  # the writer is the only writer: the row is still pending
    tx.emit("task.claimed", row, p.agent)
    return {"task": row.raw}


def _repeat_of(tx: Txn, task_id: int, agent: str, fence: int | None, state: str) -> TaskRow | None:
    """The task, if a holder operation that matched nothing had already taken effect."""
    current = _require(tx.conn, task_id)
    same_holder = current.claimed_by == agent and (fence is None or current.fence == fence)
    return current if current.state == state and same_holder else None


def _lease_lost(tx: Txn, task_id: int, agent: str, fence: int | None) -> LeaseLost:
    """Why a holder operation matched no row, with the current task (PROTOCOL 5)."""
    current = _require(tx.conn, task_id)
    if current.state != "claimed":
        reason = f"task {task_id} is {current.state}, not claimed"
    elif current.claimed_by != agent:
        reason = f"task {task_id} is held by {current.claimed_by!r}, not {agent!r}"
    elif fence is not None and current.fence != fence:
        reason = f"fence {fence} is stale; the task's fence is {current.fence}"
    else:
        reason = f"the lease on task {task_id} has expired; claim it again"
    return LeaseLost(reason, task=current.raw)


def _holder_args(tx: Txn, task_id: int, agent: str, fence: int | None) -> dict[str, Any]:
    return {"id": task_id, "agent": agent, "now": tx.now_text, "fence": fence}


def renew_task(tx: Txn, p: P.RenewParams) -> dict[str, Any]:
    args = _holder_args(tx, p.id, p.agent, p.fence) | {"until": tx.lease_until(p.lease_s)}
    row = _one(
        tx.conn,
        f"UPDATE tasks SET lease_expires_at = :until, updated_at = :now WHERE {LIVE_HOLDER}"
        f" RETURNING {ROW_COLUMNS}",
        args,
    )
    if row is None:
        raise _lease_lost(tx, p.id, p.agent, p.fence)
    tx.touch_agent(p.agent)
    return {"task": row.raw}


def release_task(tx: Txn, p: P.ReleaseParams) -> dict[str, Any]:
    row = _one(
        tx.conn,
        f"UPDATE tasks SET state = 'pending', {CLEAR_CLAIM}, updated_at = :now"
        f" WHERE {LIVE_HOLDER} RETURNING {ROW_COLUMNS}",
        _holder_args(tx, p.id, p.agent, p.fence),
    )
    if row is None:
        raise _lease_lost(tx, p.id, p.agent, p.fence)
    tx.emit("task.released", row, p.agent)
    tx.touch_agent(p.agent)
    return {"task": row.raw}


def complete_task(tx: Txn, p: P.CompleteParams) -> dict[str, Any]:
    args = _holder_args(tx, p.id, p.agent, p.fence) | {"result": p.result}
    row = _one(
        tx.conn,
        "UPDATE tasks SET state = 'done', lease_expires_at = NULL, result = :result,"
        f" updated_at = :now WHERE {LIVE_HOLDER} RETURNING {ROW_COLUMNS}",
        args,
    )
    if row is None:
        repeat = _repeat_of(tx, p.id, p.agent, p.fence, "done")
        if repeat is None:
            raise _lease_lost(tx, p.id, p.agent, p.fence)
        posted = get_row(tx.conn, repeat.posted_id) if repeat.posted_id else None
        return {"task": repeat.raw, "posted": posted.raw if posted else None}
    tx.emit("task.completed", row, p.agent)
    tx.touch_agent(p.agent)
    if p.then_post is None:
        return {"task": row.raw, "posted": None}
    posted, _created = _post(tx, p.then_post, fallback_agent=p.agent)
    tx.conn.execute("UPDATE tasks SET posted_id = ? WHERE id = ?", (posted.id, p.id))
    return {"task": row.raw, "posted": posted.raw}


def fail_task(tx: Txn, p: P.FailParams) -> dict[str, Any]:
    args = _holder_args(tx, p.id, p.agent, p.fence) | {"reason": p.reason}
    if p.retry:
        sql = (
            f"UPDATE tasks SET state = 'pending', {CLEAR_CLAIM}, result = :reason,"
            f" updated_at = :now WHERE {LIVE_HOLDER} RETURNING {ROW_COLUMNS}"
        )
    else:
        sql = (
            "UPDATE tasks SET state = 'failed', lease_expires_at = NULL, result = :reason,"
            f" updated_at = :now WHERE {LIVE_HOLDER} RETURNING {ROW_COLUMNS}"
        )
    row = _one(tx.conn, sql, args)
    if row is None:
        # A repeated fail with retry cannot be recognised: the task is pending again.
        repeat = None if p.retry else _repeat_of(tx, p.id, p.agent, p.fence, "failed")
        if repeat is None:
            raise _lease_lost(tx, p.id, p.agent, p.fence)
        return {"task": repeat.raw}
    tx.emit("task.failed", row, p.agent)
    tx.touch_agent(p.agent)
    return {"task": row.raw}


def cancel_task(tx: Txn, p: P.CancelParams) -> dict[str, Any]:
    row = _one(
        tx.conn,
        f"UPDATE tasks SET state = 'cancelled', {CLEAR_CLAIM}, result = ?, updated_at = ?"
        f" WHERE id = ? AND state IN ('pending', 'claimed') RETURNING {ROW_COLUMNS}",
        (p.reason, tx.now_text, p.id),
    )
    if row is None:
        current = _require(tx.conn, p.id)
        raise Conflict(f"task {p.id} is {current.state} and cannot be cancelled", task=current.raw)
    tx.emit("task.cancelled", row, p.agent)
    tx.touch_agent(p.agent)
    return {"task": row.raw}


def reopen_task(tx: Txn, p: P.ReopenParams) -> dict[str, Any]:
    row = _one(
        tx.conn,
        f"UPDATE tasks SET state = 'pending', {CLEAR_CLAIM}, result = NULL, posted_id = NULL,"
        " updated_at = ? WHERE id = ? AND state IN ('done', 'failed', 'cancelled')"
        f" RETURNING {ROW_COLUMNS}",
        (tx.now_text, p.id),
    )
    if row is None:
        current = _require(tx.conn, p.id)
        raise Conflict(
            f"task {p.id} is {current.state}; only done, failed or cancelled tasks reopen",
            task=current.raw,
        )
    tx.emit("task.reopened", row, p.agent)
    tx.touch_agent(p.agent)
    return {"task": row.raw}


def heartbeat(tx: Txn, p: P.HeartbeatParams) -> dict[str, Any]:
    cursor = tx.conn.execute(
        "UPDATE tasks INDEXED BY tasks_holder SET lease_expires_at = ?, updated_at = ?"
        " WHERE state = 'claimed' AND claimed_by = ? AND lease_expires_at > ?",
        (tx.lease_until(p.lease_s), tx.now_text, p.agent, tx.now_text),
    )
    tx.touch_agent(p.agent, force=True)
    return {"renewed": cursor.rowcount}


def grant_restart_grace(tx: Txn, grace_s: float) -> int:
    """Give leases that lapsed while the daemon was down a short grace (README: restart grace).

    The reaper runs every second while the daemon is up, so a claim still
    present but expired at start was live when the daemon stopped.
    """
    until = format_time(tx.now + timedelta(seconds=grace_s))
    cursor = tx.conn.execute(
        "UPDATE tasks INDEXED BY tasks_lease SET lease_expires_at = ?"
        " WHERE state = 'claimed' AND lease_expires_at < ?",
        (until, until),
    )
    return cursor.rowcount


# --- reads --------------------------------------------------------------------


def read_task(conn: sqlite3.Connection, task_id: int) -> dict[str, Any]:
    return {"task": _require(conn, task_id).raw}


def list_tasks(conn: sqlite3.Connection, p: P.ListParams) -> dict[str, Any]:
    where = ["id > :after_id"]
    args: dict[str, Any] = {"after_id": p.after_id or 0}
    _task_filters(where, args, project=p.project, kind=p.kind, state=p.state, tag=p.tag)
    if p.claimed_by is not None:
        where.append("claimed_by = :claimed_by")
        args["claimed_by"] = p.claimed_by
    limit = p.limit or P.DEFAULT_LIST_LIMIT
    condition = " AND ".join(where)
    rows = conn.execute(
        f"SELECT id, {TASK_JSON} FROM tasks WHERE {condition} ORDER BY id LIMIT {limit + 1}", args
    ).fetchall()
    more = len(rows) > limit
    rows = rows[:limit]
    return {
        "tasks": [msgspec.Raw(text) for _, text in rows],
        "next_after_id": rows[-1][0] if more else None,
    }


def _task_filters(
    where: list[str],
    args: dict[str, Any],
    *,
    project: str | None,
    kind: str | None,
    state: str | Sequence[str] | None,
    tag: str | None,
    title_contains: str | None = None,
) -> None:
    if project is not None:
        where.append("project = :project")
        args["project"] = project
    if kind is not None:
        where.append("kind = :kind")
        args["kind"] = kind
    if state is not None:
        states = [state] if isinstance(state, str) else list(dict.fromkeys(state))
        where.append(f"state IN {_in_list('state', states, args)}")
    if tag is not None:
        where.append("EXISTS (SELECT 1 FROM json_each(tasks.tags) WHERE value = :tag)")
        args["tag"] = tag
    if title_contains is not None:
        # instr, not LIKE: '%' and '_' in the needle stay literal. unicode_lower
        # (connections.py) folds like the in-memory filter of live events.
        where.append("instr(unicode_lower(title), :needle) > 0")
        args["needle"] = title_contains.lower()


def first_matching_task(
    conn: sqlite3.Connection, p: P.WaitParams
) -> tuple[msgspec.Raw | None, int]:
    """The oldest task matching a wait filter now, and the newest seq at that read."""
    where = ["1"]
    args: dict[str, Any] = {}
    _task_filters(
        where,
        args,
        project=p.project,
        kind=p.kind,
        state=p.state,
        tag=p.tag,
        title_contains=p.title_contains,
    )
    rows = conn.execute(
        f"SELECT {TASK_JSON} FROM tasks WHERE {' AND '.join(where)} ORDER BY id LIMIT 1", args
    ).fetchall()
    seq = last_seq(conn)
    return (msgspec.Raw(rows[0][0]) if rows else None), seq


def last_seq(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone()
    return int(row[0]) if row else 0


def require_known_seq(after_seq: int, newest: int) -> None:
    """Refuse a resume point from the future: it means the board is not the one it came from.

    A client holding a seq from before a restore (or from another database)
    would otherwise be told "nothing new" for every event until the log
    caught up with it, silently.
    """
    if after_seq > newest:
        raise InvalidParams(
            f"after_seq {after_seq} is beyond the newest event ({newest}): this board was"
            " restored or replaced since that seq was read; resume from 0 or a seq it gave",
            field="after_seq",
            last_seq=newest,
        )


def state_counts(conn: sqlite3.Connection) -> dict[str, int]:
    counts: dict[str, int] = dict.fromkeys(STATES, 0)
    counts.update(conn.execute("SELECT state, count(*) FROM tasks GROUP BY state").fetchall())
    return counts


def list_agents(conn: sqlite3.Connection, now_text: str) -> dict[str, Any]:
    rows = conn.execute(
        "SELECT agent, last_seen, (SELECT count(*) FROM tasks INDEXED BY tasks_holder"
        " WHERE state = 'claimed'"
        " AND claimed_by = agents.agent AND lease_expires_at > ?) FROM agents"
        " ORDER BY last_seen DESC, agent",
        (now_text,),
    ).fetchall()
    return {
        "agents": [
            {"agent": agent, "last_seen": seen, "holding": holding} for agent, seen, holding in rows
        ]
    }


def events_since(
    conn: sqlite3.Connection,
    after_seq: int,
    limit: int,
    project: str | None,
    types: list[str] | None,
) -> tuple[list[msgspec.Raw], int]:
    """Stored events after `after_seq`, and the `last_seq` to resume from (PROTOCOL 6)."""
    where = ["seq > :after"]
    args: dict[str, Any] = {"after": after_seq}
    if project is not None:
        where.append("project = :project")
        args["project"] = project
    if types:
        where.append(f"type IN {_in_list('type', list(dict.fromkeys(types)), args)}")
    newest = last_seq(conn)
    require_known_seq(after_seq, newest)
    rows = conn.execute(
        f"SELECT seq, data FROM events WHERE {' AND '.join(where)} ORDER BY seq LIMIT {limit}",
        args,
    ).fetchall()
    if len(rows) == limit:
        return [msgspec.Raw(data) for _, data in rows], rows[-1][0]
    return [msgspec.Raw(data) for _, data in rows], newest

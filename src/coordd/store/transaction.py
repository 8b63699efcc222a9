"""What a write command runs inside: the transaction context, and the row and event shapes.

Tasks leave SQLite already encoded as JSON (`json_object`), so the hot path
never builds a Python dict per row. Every write appends its events to the
`events` table in the same transaction, through `Txn.emit`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, NamedTuple, cast

import msgspec

from coordd.clock import format_time
from coordd.limits import Limits
from coordd.store.sql import Db
from coordd_wire import params as P
from coordd_wire.errors import NotFound
from coordd_wire.method_table import OPT_IN_EVENT_TYPES
from coordd_wire.wire import Task

#: A task's `blocked_by` (PROTOCOL.md section 9): its dependencies not done
#: now, ascending. A task with none open pays only the CASE, never a lookup.
BLOCKED_BY = (
    "CASE WHEN open_deps = 0 THEN json('[]') ELSE (SELECT json_group_array(id) FROM"
    " (SELECT dep.id FROM json_each(tasks.depends_on) AS j"
    " JOIN tasks AS dep ON dep.id = CAST(j.value AS INTEGER)"
    " WHERE dep.state <> 'done' ORDER BY dep.id) AS open_dep) END"
)
TASK_JSON = (
    "json_object('id', id, 'project', project, 'kind', kind, 'title', title, 'body', body,"
    " 'state', state, 'priority', priority, 'tags', json(tags), 'created_by', created_by,"
    " 'created_at', created_at, 'updated_at', updated_at, 'claimed_by', claimed_by,"
    " 'claimed_at', claimed_at, 'lease_expires_at', lease_expires_at, 'fence', fence,"
    " 'attempts', attempts, 'result', result, 'assignee', assignee,"
    f" 'depends_on', json(depends_on), 'blocked_by', {BLOCKED_BY})"
)
ROW_COLUMNS = (
    "id, project, state, claimed_by, lease_expires_at, fence, posted_id, assignee, open_deps,"
    f" event_seq, {TASK_JSON}"
)
#: A task nobody but `:agent` may claim now: not blocked, and unassigned or theirs.
CLAIMABLE_BY_AGENT = "open_deps = 0 AND (assignee IS NULL OR assignee = :agent)"
LIVE_HOLDER = (
    "id = :id AND state = 'claimed' AND claimed_by = :agent AND lease_expires_at > :now"
    " AND (CAST(:fence AS INTEGER) IS NULL OR fence = :fence)"
)
CLEAR_CLAIM = "claimed_by = NULL, claimed_at = NULL, lease_expires_at = NULL"


#: The events that take a task out of `claimed` (or find it out of it already).
LEAVES_CLAIM = frozenset(
    {"task.released", "task.expired", "task.completed", "task.failed", "task.cancelled"}
)


# Events with no task (`task_id` null, no `task`) are delivered only to a subscription
# or `events.since` whose `types` names them (docs/PROTOCOL-1.2.md sections 11-14), so
# a client that expects every event to carry a task never meets one; `task.wait` never
# matches them. They are exactly the event types a feature brings: the method table's
# `OPT_IN_EVENT_TYPES`, read by both ends, not a second list.


class TaskRow(NamedTuple):
    """The columns the daemon's logic needs, plus the task's wire JSON."""

    id: int
    project: str
    state: str
    claimed_by: str | None
    lease_expires_at: str | None
    fence: int
    posted_id: int | None
    assignee: str | None
    open_deps: int
    #: The seq of the task's newest event as stored. The write store moves it once
    #: per group, at the group's end (`write_store.link_events`), so during a group
    #: it is the newest from before the group.
    event_seq: int | None
    json: str

    @property
    def raw(self) -> msgspec.Raw:
        return msgspec.Raw(self.json)

    @property
    def task(self) -> Task:
        """The task as a result Struct's member (`wire_task`), in one call: the claim path."""
        return msgspec.Raw(self.json)  # type: ignore[return-value]


def wire_task(raw: msgspec.Raw) -> Task:
    """A task's wire JSON as a result Struct's `Task` member, never decoded (issue 45).

    msgspec encodes a `Raw` as it is, so a result Struct carries the JSON SQLite made
    and the hot path builds no `Task` per row. It is typed as the `Task` it encodes for
    the result's sake only: the daemon never reads it back (read the `TaskRow`)."""
    return cast(Task, raw)


class CommittedEvent(NamedTuple):
    """An event appended by a transaction; published only after COMMIT returns."""

    seq: int
    type: str
    project: str
    task_json: str
    #: The event exactly as sent on the wire (and stored).
    data: bytes
    task_id: int = 0
    at: str = ""
    #: The task's newest stored event when this one was emitted (`link_events`
    #: makes it the previous event of the task, counting its own group's).
    prev_seq: int | None = None


class EventOut(msgspec.Struct, kw_only=True):
    """A task event as sent and stored (PROTOCOL.md section 7); bench/floor_rows.py
    encodes its claims' events with it too."""

    seq: int
    at: str
    type: str
    task_id: int
    agent: str | None
    task: msgspec.Raw


class _HandedBackOut(EventOut, kw_only=True):
    """1.2 `agent.release`: the event also names whose holding went, and why."""

    of: str
    reason: str | None


encoder = msgspec.json.Encoder()


# The writer gives every command of a batch the same instant, so a batch of
# claims formats its `now` and its default lease end once, not once per claim:
# formatting was the largest piece of the writer's own Python per claim.
_format_instant = functools.lru_cache(maxsize=64)(format_time)


@dataclass
class Txn:
    """What one write command sees: the connection, its instant, and its events."""

    conn: Db
    now: datetime
    #: When each agent's last-seen was written, as committed (the writer's cache; read only).
    agents_seen: Mapping[str, datetime]
    next_seq: int
    #: The same, written by this group's earlier commands that succeeded (read only).
    group_seen: Mapping[str, datetime] = field(default_factory=dict)
    events: list[CommittedEvent] = field(default_factory=list)
    #: Projects whose reservations or slot units this command ended with no task
    #: event to say so: after COMMIT this daemon wakes the acquires waiting there
    #: (`Writer.on_freed`), and on a team store the doorbell tells the others.
    freed_projects: set[str] = field(default_factory=set)
    #: The last-seen writes of this command. Staged like its events: the writer adds
    #: them to the group if the command succeeds, and to its cache only after COMMIT,
    #: so a write that was rolled back is never remembered.
    seen: dict[str, datetime] = field(default_factory=dict)
    #: The events this group's earlier commands appended, not yet stored (the group
    #: stores them all at its end): read only, by the one reader that must see the
    #: log as it will be, the token ledger's attribution (`store/attribution.py`).
    group_events: Sequence[CommittedEvent] = ()
    #: Rows this group's leading claims won in one statement before its commands ran
    #: (`claims.leading_claims`), by id: each claim takes its own (shared by the group).
    claimed_ahead: dict[int, TaskRow] = field(default_factory=dict)
    #: Agents this command acts for without their doing (a hand-over grants the
    #: requester what it asked for): their last-seen stays as it is.
    absent: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.now_text = _format_instant(self.now)

    def lease_until(self, lease_s: float | None) -> str:
        seconds = P.DEFAULT_LEASE_S if lease_s is None else lease_s
        return _format_instant(self.now + timedelta(seconds=seconds))

    def emit(
        self,
        event_type: str,
        row: TaskRow,
        agent: str | None,
        *,
        of: str | None = None,
        reason: str | None = None,
    ) -> None:
        """Append an event. The writer stores a group's events with one call just before
        COMMIT (`WriteStore.append_events`): one executemany per group on SQLite, one
        statement sent with COMMIT on PostgreSQL, instead of a statement per event.

        `of` (and `reason`): the event is `agent` letting go of what `of` held
        (1.2 `agent.release`); every other event has neither member."""
        # The writer is the only writer, so it numbers events itself (gap-free in
        # commit order); it restores `next_seq` when a command rolls back.
        seq = self.next_seq
        self.next_seq += 1
        if of is None:  # the hot path: no dict, no second Struct
            out: EventOut = EventOut(
                seq=seq, at=self.now_text, type=event_type, task_id=row.id, agent=agent,
                task=row.raw,
            )  # fmt: skip
        else:
            out = _HandedBackOut(
                seq=seq, at=self.now_text, type=event_type, task_id=row.id, agent=agent,
                task=row.raw, of=of, reason=reason,
            )  # fmt: skip
        data = encoder.encode(out)
        self.events.append(
            CommittedEvent(
                seq, event_type, row.project, row.json, data, row.id, self.now_text, row.event_seq
            )
        )
        if event_type in LEAVES_CLAIM:
            # PROTOCOL.md section 10: a task-bound reservation ends in the same
            # transaction as its task leaves `claimed`. Done here, with the
            # event every such transition appends, so none can forget it.
            self.conn.execute("DELETE FROM reservations WHERE task_id = ?", (row.id,))

    def emit_untasked(
        self,
        event_type: str,
        project: str,
        encode: Callable[[int], bytes],
        *,
        task_id: int | None = None,
        prev_seq: int | None = None,
    ) -> None:
        """Append an event that changes no task (`file.edited`, `message.sent`, `slot.*`,
        `land.*`): `encode(seq)` gives its wire bytes. Its `task_json` is empty, so
        `task.wait` never matches it, and its type must be one of `OPT_IN_EVENT_TYPES`,
        which only reach a subscriber that names them. With `task_id` (a message on a
        task's thread) it joins that task's history chain after `prev_seq`."""
        if event_type not in OPT_IN_EVENT_TYPES:
            raise ValueError(f"{event_type} is a task-less event type not in OPT_IN_EVENT_TYPES")
        seq = self.next_seq
        self.next_seq += 1
        self.events.append(
            CommittedEvent(
                seq, event_type, project, "", encode(seq), task_id or 0, self.now_text, prev_seq
            )
        )

    def touch_agent(self, agent: str | None, *, force: bool = False) -> None:
        """Write `agent`'s last-seen (and clear a reported end: it is here again), unless it
        was written less than a resolution ago."""
        if agent is None or agent in self.absent:
            return
        if not force:
            last = self.agents_seen.get(agent)
            if (
                last is not None
                and (self.now - last).total_seconds() < Limits.agent_seen_resolution_s
            ):
                return  # written lately, and committed
            if self.now in (self.seen.get(agent), self.group_seen.get(agent)):
                return  # written by this group already, at this same instant
        self.conn.execute(
            "INSERT INTO agents (agent, last_seen) VALUES (?, ?)"
            " ON CONFLICT (agent) DO UPDATE SET last_seen = excluded.last_seen, ended_at = NULL",
            (agent, self.now_text),
        )
        self.seen[agent] = self.now


def one_row(conn: Db, sql: str, args: Sequence[Any] | dict[str, Any]) -> TaskRow | None:
    # fetchall, not fetchone: it steps RETURNING statements to completion so no
    # statement is left open across RELEASE/COMMIT.
    rows = conn.execute(sql, args).fetchall()
    return TaskRow(*rows[0]) if rows else None


def get_row(conn: Db, task_id: int) -> TaskRow | None:
    return one_row(conn, f"SELECT {ROW_COLUMNS} FROM tasks WHERE id = ?", (task_id,))


def require_row(conn: Db, task_id: int) -> TaskRow:
    row = get_row(conn, task_id)
    if row is None:
        raise NotFound(f"no task with id {task_id}", id=task_id)
    return row


def dedupe(tags: list[str] | None) -> list[str]:
    return list(dict.fromkeys(tags or ()))


def in_list(prefix: str, values: Sequence[str | int], args: dict[str, Any]) -> str:
    """`(:prefix0, :prefix1, ...)`, binding each value in `args`: no SQL built from input."""
    names = []
    for index, value in enumerate(values):
        names.append(f":{prefix}{index}")
        args[f"{prefix}{index}"] = value
    return f"({', '.join(names)})"

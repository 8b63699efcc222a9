"""What an agent held at past instants, read back from the claim state and the event log.

The ledger charges a model call to the tasks its agent held when the call was made
(docs/PROTOCOL-1.2.md section 15). A hook reports a turn's usage after the turn,
by which time the task may be done or handed over, so "now" is not the answer: the
walk starts from what the agent holds now (the `tasks` rows) and undoes, newest
first, each claim and each end of a claim the log holds, until it is older than
the instant asked about. No claim statement writes anything for this: the events
every claim, release, expiry, completion and hand-over already append are enough.

What an event says about the holder it ends: `task.released`, `task.expired`,
`task.completed` and `task.failed` carry the holder as their `agent`, and
`agent.release`'s release names it in `of`; `task.cancelled` (anyone may cancel)
is the one that needs the task's history chain (`prev_seq`) to find its claimer.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import msgspec

from coordd.limits import Limits
from coordd.store.sql import Db
from coordd.store.transaction import LEAVES_CLAIM, CommittedEvent, in_list

_CLAIMED = "task.claimed"
#: Events that start or end a claim: the only ones the walk reads.
_HOLD_TYPES: tuple[str, ...] = (_CLAIMED, *sorted(LEAVES_CLAIM))
#: Seqs one statement reads back through (a range of the primary key, whatever the
#: types in it: a log of mostly `file.edited` costs a range scan, not a search).
_WINDOW = 2048
#: Steps back along one task's history chain to find who a cancel ended.
_CHAIN_STEPS = 32
#: Events that say the task was not held just before them (so a cancel ended no claim).
_NOT_HELD_BEFORE = frozenset({"task.posted", "task.reopened", *LEAVES_CLAIM})


class _Who(msgspec.Struct):
    """The members of an event that name a holder."""

    agent: str | None = None
    of: str | None = None


_who = msgspec.json.Decoder(_Who)


class _Event(NamedTuple):
    seq: int
    at: str
    type: str
    task_id: int
    data: str | bytes
    prev_seq: int | None


class _Unknown:
    """The walk reached its limit of events: older instants are unknown."""


class _Floor:
    """The walk reached `above`: what was held before is the earlier walk's answer."""


class Walked(NamedTuple):
    """What a walk on a reader found: the answers for its instants (in their order),
    as of the log up to `last_seq`, which the writer then walks down to."""

    last_seq: int
    answers: dict[str, tuple[int, ...] | None]


def walk_on_reader(conn: Db, agent: str, instants: Sequence[str], now: str) -> Walked:
    """`held_at` for `instants` inside one read transaction (one snapshot): the long
    part of a report's attribution, kept out of the writer."""
    row = conn.execute(conn.last_seq_sql).fetchone()
    last_seq = row[0] if row and row[0] is not None else 0
    unique = sorted(set(instants))
    answers = held_at(conn, agent, unique, now, below_seq=last_seq + 1)
    return Walked(last_seq, dict(zip(unique, answers, strict=True)))


def held_at(
    conn: Db,
    agent: str,
    instants: Sequence[str],
    now: str,
    *,
    limit: int | None = None,
    unstored: Sequence[CommittedEvent] = (),
    below_seq: int | None = None,
    walked: Walked | None = None,
) -> list[tuple[int, ...] | None]:
    """For each instant (`format_time` text), the ids of the tasks `agent` held then,
    ascending; None where the walk would pass `limit` events (unattributed, not a guess).

    An event at exactly an instant counts as before it: a call made in the very
    microsecond of a claim is charged to the claimed task. An instant after `now`
    (a host's clock ahead of the daemon's) is taken as `now`. `unstored`: this write
    group's earlier events, which the table does not hold yet (a claim committed in
    the same group as the report is already in `tasks`, so its event must be too).
    `below_seq`: the walk reads only events below it (a reader's snapshot).
    `walked`: a reader's answers as of its `last_seq`; the walk then reads only the
    events after it (at most `limit`), and an instant older than all of them takes
    the reader's answer, which no later event can change.
    """
    cap = Limits.usage_attribution_events if limit is None else limit
    #: task id -> when the hold ends (a live claim's lease end), or None: past the
    #: instant being asked about (a hold the walk found in the log).
    held: dict[int, str | None] = {
        task_id: lease_end
        for task_id, lease_end in conn.execute(
            "SELECT id, lease_expires_at FROM tasks INDEXED BY tasks_lease"
            " WHERE state = 'claimed' AND claimed_by = ?",
            (agent,),
        ).fetchall()
    }
    answers: list[tuple[int, ...] | None] = [None] * len(instants)
    if not instants:
        return answers
    events = itertools.chain(
        (
            _Event(e.seq, e.at, e.type, e.task_id, e.data, e.prev_seq)
            for e in reversed(unstored)
            if e.type in _HOLD_TYPES
        ),
        _newest_first(
            conn, cap, min(*instants, now), below_seq, None if walked is None else walked.last_seq
        ),
    )
    pending: _Event | _Unknown | _Floor | None = next(events, None)
    for index in sorted(range(len(instants)), key=lambda i: instants[i], reverse=True):
        instant = min(instants[index], now)
        while isinstance(pending, _Event) and pending.at > instant:
            _undo(conn, held, agent, pending)
            pending = next(events, None)
        if isinstance(pending, _Unknown):
            continue  # stays None: older than the walk may go
        if isinstance(pending, _Floor) and walked is not None:
            answers[index] = walked.answers.get(instants[index])
            continue
        answers[index] = tuple(
            sorted(task for task, end in held.items() if end is None or instant < end)
        )
    return answers


def _newest_first(
    conn: Db, cap: int, oldest: str, below_seq: int | None, above_seq: int | None
) -> Iterator[_Event | _Unknown | _Floor]:
    """The claim events of the log below `below_seq` (else all), newest first, a window
    of seqs at a time, until a window starts before `oldest` (the earliest instant
    asked about: nothing older can matter); `_Floor` on reaching `above_seq` (an
    earlier walk's snapshot); `_Unknown` once `cap` seqs were walked with either
    still ahead."""
    if below_seq is None:
        row = conn.execute(conn.last_seq_sql).fetchone()
        below_seq = (row[0] if row and row[0] is not None else 0) + 1
    high = below_seq
    bottom = 1 if above_seq is None else above_seq + 1
    args: dict[str, Any] = {}
    types = in_list("t", _HOLD_TYPES, args)
    while True:
        if high <= bottom:
            if above_seq is not None:
                yield _Floor()
            return
        if cap <= 0:
            yield _Unknown()
            return
        low = max(bottom, high - min(_WINDOW, cap))
        cap -= high - low
        rows = conn.execute(
            f"SELECT seq, at, type, task_id, data, prev_seq FROM events WHERE seq >= :low"
            f" AND seq < :high AND type IN {types} ORDER BY seq DESC",
            {**args, "low": low, "high": high},
        ).fetchall()
        for found in rows:
            yield _Event(*found)
        first = conn.execute(
            "SELECT at FROM events WHERE seq >= :low ORDER BY seq LIMIT 1", {"low": low}
        ).fetchone()
        if first is None:
            high = bottom  # nothing from `low` up: the rest went with retention
        elif first[0] < oldest:
            return  # this window began before every instant asked about
        else:
            high = low


def _undo(conn: Db, held: dict[int, str | None], agent: str, event: _Event) -> None:
    """`held` as it was just before `event`."""
    who = _who.decode(event.data)
    if event.type == _CLAIMED:
        if who.agent == agent:
            held.pop(event.task_id, None)
        return
    if who.of is not None:
        holder: str | None = who.of
    elif event.type == "task.cancelled":
        holder = _claimer(conn, event.prev_seq)
    else:
        holder = who.agent
    if holder == agent:
        held[event.task_id] = None


def _claimer(conn: Db, seq: int | None) -> str | None:
    """Who held the task just before the event after `seq` in its history, if anyone."""
    for _ in range(_CHAIN_STEPS):
        if seq is None:
            return None
        row = conn.execute(
            "SELECT type, data, prev_seq FROM events WHERE seq = ?", (seq,)
        ).fetchone()
        if row is None:
            return None  # trimmed by retention: unknown, so not charged
        kind, data, seq = row
        if kind == _CLAIMED:
            return _who.decode(data).agent
        if kind in _NOT_HELD_BEFORE:
            return None
    return None

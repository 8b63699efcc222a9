"""The writer's group step as one plain function: begin, each command, events, COMMIT.

The writer thread (`store/writer.py`) calls it for every group it takes off its
queue; the store tests (`tests/store/`) call it to run a store function in a
transaction on a fresh board, and the bench's diagnostics and the hot-path
guards to time and count a group of claims. One copy of the sequence, so what
the tests pin is what the daemon runs.

Optimistic first: no savepoints, which are two statements (two GIL hand-offs on
SQLite, two round trips on PostgreSQL) per command. If a command fails, that
attempt is rolled back whole and the group runs again with each command in its
own savepoint, so one failure undoes only its own command. Commands are
functions of the database and their params, so the second run computes what the
first would have, minus the failed command.

What a group did is staged until COMMIT returns (its answers, its events, the
projects whose reservations went, the agents' last-seen writes) and handed back
in a `Group`; nothing here touches the caller's state, so a failure only rolls
back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple, Protocol

from coordd.store import claims, transaction
from coordd.store.write_store import WriteStore
from coordd_wire.errors import CoordError


class Step(Protocol):
    """A command as the group runs it: `fn(txn, *args)` (the writer's `Command` is one)."""

    @property
    def fn(self) -> Callable[..., Any]: ...

    @property
    def args(self) -> tuple[Any, ...]: ...


class Call(NamedTuple):
    """A `Step` for callers without a queue (tests, the bench)."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]


#: Each step's answer, in order: (value, None) or (None, its wire error).
Result = tuple[Any, CoordError | None]


@dataclass(slots=True)
class Group:
    """A committed group: what it answered and what it did, known after COMMIT."""

    now: datetime
    results: list[Result]
    events: list[transaction.CommittedEvent]
    #: Projects whose reservations ended with no task event to say so (`Txn.freed_projects`).
    freed: set[str]
    #: The agents' last-seen writes, for the writer's cache.
    seen: dict[str, datetime]


class Abandoned(Exception):
    """The group cannot commit because of `cause`; the caller rolls back what is left."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(cause)
        self.cause = cause


class Lost(Exception):
    """A step's failure took the whole transaction with it (disk full, connection lost):
    every step of the group gets `error`; nothing is left to roll back."""

    def __init__(self, error: CoordError) -> None:
        super().__init__(error)
        self.error = error


def coord_errors_only(exc: Exception) -> CoordError:
    """The default error mapping for tests and the bench: a wire error is an answer,
    anything else is a bug and propagates."""
    if isinstance(exc, CoordError):
        return exc
    raise exc


def run_transaction(
    store: WriteStore,
    steps: Sequence[Step],
    agents_seen: Mapping[str, datetime],
    *,
    command_error: Callable[[Exception], CoordError] = coord_errors_only,
    on_instant: Callable[[datetime], None] | None = None,
) -> Group:
    """Run `steps` in one write transaction and COMMIT once.

    Args:
        store: the write connection and its transaction control.
        steps: the commands, run in order.
        agents_seen: the last-seen writes already committed (read, never written).
        command_error: maps a failed step's exception to its wire error.
        on_instant: told the group's instant (team mode: the database's clock).

    Raises:
        Abandoned: the group did not commit (begin, a rollback, a savepoint's
            release or the COMMIT failed, or the disk failed a write).
        Lost: a step's failure ended the transaction for every step.
    """
    group = _run(store, steps, agents_seen, command_error, on_instant, isolated=False)
    if group is None:
        group = _run(store, steps, agents_seen, command_error, on_instant, isolated=True)
    assert group is not None  # an isolated run never asks to run again
    return group


def _run(
    store: WriteStore,
    steps: Sequence[Step],
    agents_seen: Mapping[str, datetime],
    command_error: Callable[[Exception], CoordError],
    on_instant: Callable[[datetime], None] | None,
    *,
    isolated: bool,
) -> Group | None:
    """Run the group once; None when a step failed outside a savepoint (the attempt
    is rolled back: run it again isolated)."""
    try:
        # One instant for the whole group: its commands commit together.
        now, last_seq = store.begin()
    except Exception as exc:
        raise Abandoned(exc) from exc
    if on_instant is not None:
        on_instant(now)
    next_seq = last_seq + 1
    results: list[Result] = []
    events: list[transaction.CommittedEvent] = []
    freed: set[str] = set()
    seen: dict[str, datetime] = {}
    fault: Exception | None = None
    ahead: dict[int, transaction.TaskRow] = {}
    # Isolated: each command in its own savepoint, and no claim runs ahead of it.
    if store.claims_ahead and not isolated and len(steps) > 1:
        leading = claims.leading_claims(steps)
        if len(leading) > 1:
            try:
                ahead = store.claim_ahead(
                    transaction.Txn(store.db, now, agents_seen, next_seq), leading
                )
            except Exception as exc:
                if store.is_disk_fault(exc):
                    raise Abandoned(exc) from exc
                try:
                    store.rollback()
                except Exception as rollback_exc:
                    raise Abandoned(rollback_exc) from rollback_exc
                return None
    for step in steps:
        txn = transaction.Txn(
            store.db, now, agents_seen, next_seq, group_seen=seen, group_events=events,
            claimed_ahead=ahead,
        )  # fmt: skip
        try:
            if isolated:
                store.savepoint()
            value = step.fn(txn, *step.args)
        except Exception as exc:
            if not isolated:
                if store.is_disk_fault(exc):
                    raise Abandoned(exc) from exc  # not run again: the writer stops
                try:
                    store.rollback()
                except Exception as rollback_exc:
                    raise Abandoned(rollback_exc) from rollback_exc
                return None
            error = command_error(exc)
            if store.is_disk_fault(exc):
                fault = exc
            if not store.rollback_command():
                raise Lost(error) from exc
            results.append((None, error))
            continue
        if isolated:
            try:
                store.release()
            except Exception as exc:
                raise Abandoned(exc) from exc
        next_seq = txn.next_seq
        events.extend(txn.events)
        freed.update(txn.freed_projects)
        seen.update(txn.seen)
        results.append((value, None))
    if fault is not None:  # a step of this group met it in its savepoint
        raise Abandoned(fault)
    try:
        if events:
            store.append_events(events)
        store.commit(events[-1].seq if events else None, freed)
    except Exception as exc:
        raise Abandoned(exc) from exc
    return Group(now, results, events, freed, seen)


def run_each(
    store: WriteStore,
    fn: Callable[..., Any],
    params: Sequence[Any],
    agents_seen: dict[str, datetime],
) -> list[Any]:
    """`fn(txn, p)` for each of `params` as one group, for the bench and the hot-path
    guards: their values in order, the first refusal raised, and the last-seen writes
    added to `agents_seen` after COMMIT, as the writer's cache is."""
    done = run_transaction(store, [Call(fn, (p,)) for p in params], agents_seen)
    for _, error in done.results:
        if error is not None:
            raise error
    agents_seen.update(done.seen)
    return [value for value, _ in done.results]

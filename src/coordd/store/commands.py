"""What travels on the writer's queue: a command, its reply path, and how errors map.

Kept apart from `writer.py`, which runs them, so the thread's loop reads on
its own.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import trio

from coordd.store.connections import SQLITE_FULL, is_busy, primary_error_code
from coordd.store.transaction import CommittedEvent
from coordd_wire.errors import CoordError, InternalError, Overloaded

log = logging.getLogger(__name__)

WriteFn = Callable[..., Any]
OnCommit = Callable[[list[CommittedEvent]], None]
#: Called on the writer thread right after COMMIT with (value, error).
Answer = Callable[[Any, CoordError | None], None]


class Command:
    __slots__ = ("answer", "answered", "args", "fn", "transactional", "waiter")

    def __init__(
        self,
        fn: WriteFn,
        args: tuple[Any, ...],
        transactional: bool,
        answer: Answer | None = None,
        answered: Callable[[], None] | None = None,
    ) -> None:
        self.fn = fn
        self.args = args
        self.transactional = transactional
        #: Either the writer thread answers (`answer`, then `answered` on the
        #: trio thread) or a parked trio task is rescheduled with the outcome.
        self.answer = answer
        self.answered = answered
        self.waiter = None if answer is not None else trio.lowlevel.current_task()


def refuse_abort(_: Any) -> trio.lowlevel.Abort:
    """Once queued, a write cannot be abandoned: its caller waits for the outcome."""
    return trio.lowlevel.Abort.FAILED


Outcome = tuple[Command, Any, CoordError | None]


@dataclass(frozen=True)
class WriterStatistics:
    """A snapshot for `server.info` and the group-commit regression guard."""

    transactions: int
    commands: int
    largest_group: int
    queued: int


def map_sqlite_error(exc: sqlite3.Error) -> CoordError:
    """Turn an SQLite failure into a wire error: retryable where retrying can help."""
    if is_busy(exc):
        return Overloaded(
            "the database is locked by another process; retry later", reason="database_locked"
        )
    if primary_error_code(exc) == SQLITE_FULL:
        return Overloaded("the database or disk is full; retry later", reason="disk_full")
    log.error("sqlite error in a write: %s", exc, exc_info=exc)
    return InternalError(f"database error: {exc}")

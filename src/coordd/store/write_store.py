"""The writer thread's view of its database: the transaction control that differs per backend.

`Writer` runs the group commit once, for both backends, through this
interface: begin a group (which also says the group's instant and the last
committed seq), a savepoint per command, commit with the group's last seq.
`SqliteWriteStore` is the embedded default; `coordd.store.postgres.writer`
holds the team store's.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Collection, Sequence
from datetime import datetime
from pathlib import Path
from typing import Protocol

import msgspec

from coordd.clock import Clock
from coordd.store import reads
from coordd.store.commands import map_sqlite_error
from coordd.store.connections import (
    DatabaseUnusable,
    Durability,
    SqliteDb,
    is_disk_fault,
    open_writer_connection,
    unusable,
)
from coordd.store.schema import migrate
from coordd.store.sql import Db
from coordd.store.transaction import CommittedEvent, TaskRow, Txn
from coordd_wire.errors import CoordError
from coordd_wire.params import ClaimParams

log = logging.getLogger(__name__)

INSERT_EVENT = (
    "INSERT INTO events (seq, type, project, at, data, task_id, prev_seq)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)
#: Each task's newest event, for a group's tasks at once (`link_events`).
SET_NEWEST_EVENT = (
    "UPDATE tasks SET event_seq = newest.value ->> 1 FROM json_each(?) AS newest"
    " WHERE tasks.id = newest.value ->> 0"
)

EventRow = tuple[int, str, str, str, str, int | None, int | None]


def link_events(events: list[CommittedEvent]) -> tuple[list[EventRow], dict[int, int]]:
    """A group's `events` rows, each linked to its task's event before it, and each
    task's newest seq (schema.EVENT_CHAIN).

    A task's stored `event_seq` moves once per group, at its end, so an event
    emitted in the group read the seq from before the group: an earlier event
    of the same task in this group is its predecessor instead. `data` is the
    wire JSON, stored as text.
    """
    newest: dict[int, int] = {}
    rows: list[EventRow] = []
    for event in events:
        if not event.task_id:  # an event with no task (section 11) is in no chain
            rows.append((event.seq, event.type, event.project, event.at,
                         event.data.decode(), None, None))  # fmt: skip
            continue
        previous = newest.get(event.task_id, event.prev_seq)
        rows.append(
            (
                event.seq, event.type, event.project, event.at, event.data.decode(),
                event.task_id, previous,
            )
        )  # fmt: skip
        newest[event.task_id] = event.seq
    return rows, newest


class WriteStore(Protocol):
    """One write connection, driven only by the writer thread."""

    @property
    def db(self) -> Db:
        """What each command's `Txn` (and an outside-transaction command) uses."""
        ...

    def open(self) -> int:
        """Connect, recover, migrate; return the last committed seq."""
        ...

    def begin(self) -> tuple[datetime, int]:
        """Start a group's transaction; return its instant and the last committed seq."""
        ...

    def now(self) -> datetime:
        """The instant the store's clock reads now, outside any group (after `open`)."""
        ...

    def savepoint(self) -> None: ...

    def release(self) -> None: ...

    def rollback_command(self) -> bool:
        """Undo the current command; False if the whole transaction is gone with it."""
        ...

    #: Whether a group's leading claims are worth one statement for all (`claim_ahead`):
    #: where each statement costs a round trip. False: the group never looks for them.
    claims_ahead: bool

    def claim_ahead(self, tx: Txn, claims: Sequence[ClaimParams]) -> dict[int, TaskRow]:
        """The claim statement of a group's leading claims (`claims.leading_claims`),
        run for them all at once where a statement costs a round trip: {id: the row
        each one won}; {} where statements are cheap (SQLite)."""
        ...

    def append_events(self, events: list[CommittedEvent]) -> None:
        """Store a group's events (at least one), just before its COMMIT."""
        ...

    def commit(self, last_seq: int | None, freed_projects: Collection[str]) -> None:
        """COMMIT the group; `last_seq` is its newest event (None: it appended none).

        `freed_projects`: projects whose reservations the group released, for
        other daemons on the same store to wake their waiters.
        """
        ...

    def rollback(self) -> None:
        """Abandon the group's transaction if one is open."""
        ...

    def map_error(self, exc: Exception) -> CoordError | None:
        """The wire error for a database failure; None if `exc` is not one."""
        ...

    def is_disk_fault(self, exc: Exception) -> bool:
        """Whether `exc` is the disk failing under this process: the writer then stops
        writing and the daemon exits to recover from the log (docs/ARCHITECTURE.md,
        "After a disk error")."""
        ...

    def close(self) -> None: ...


class SqliteWriteStore:
    """The embedded store: one SQLite file in WAL mode, `BEGIN IMMEDIATE` per group."""

    #: A statement costs no round trip here: each claim runs its own, and the claim
    #: path does not look for the group's leading claims at all.
    claims_ahead = False

    def __init__(
        self,
        path: Path,
        *,
        durability: Durability,
        clock: Clock,
        max_pages: int | None = None,
    ) -> None:
        self._path = path
        self._durability = durability
        self._clock = clock
        self._max_pages = max_pages
        self._conn: SqliteDb | None = None
        # The writer is the only writer: it knows the last seq without asking.
        self._last_seq = 0

    @property
    def db(self) -> SqliteDb:
        assert self._conn is not None, "open() first"
        return self._conn

    def open(self) -> int:
        """Open the write connection: WAL recovery and migrations happen here, first.

        A file that is not a database, or whose header or schema cannot be read,
        is refused here; the read of every page runs once the daemon serves
        (`store_check`), so a start costs what recovery needs, not the file's size.
        """
        try:
            self._conn = open_writer_connection(self._path, self._durability)
            migrate(self._conn)
        except (sqlite3.DatabaseError, DatabaseUnusable) as exc:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            if isinstance(exc, DatabaseUnusable):
                raise
            raise unusable(self._path, exc) from exc
        if self._max_pages is not None:
            self._conn.execute(f"PRAGMA max_page_count = {int(self._max_pages)}")
        self._last_seq = reads.last_seq(self._conn)
        return self._last_seq

    def begin(self) -> tuple[datetime, int]:
        self.db.execute("BEGIN IMMEDIATE")
        return self._clock.now(), self._last_seq

    def now(self) -> datetime:
        return self._clock.now()

    def savepoint(self) -> None:
        self.db.execute("SAVEPOINT command")

    def release(self) -> None:
        self.db.execute("RELEASE command")

    def rollback_command(self) -> bool:
        conn = self.db
        if not conn.in_transaction:
            return False
        try:
            conn.execute("ROLLBACK TO command")
            conn.execute("RELEASE command")
        except sqlite3.Error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            return False
        return True

    def claim_ahead(self, tx: Txn, claims: Sequence[ClaimParams]) -> dict[int, TaskRow]:
        return {}  # a statement here costs no round trip: each claim runs its own

    def append_events(self, events: list[CommittedEvent]) -> None:
        # One call for the group. Measured against one INSERT ... SELECT FROM
        # json_each(?) of the whole group: executemany cost less writer CPU
        # per claim at 16 clients (122-130 us against 132-138 us). The tasks'
        # newest seqs are one statement: their rows are on pages this group
        # wrote already.
        rows, newest = link_events(events)
        self.db.executemany(INSERT_EVENT, rows)
        self.db.execute(SET_NEWEST_EVENT, (msgspec.json.encode(list(newest.items())),))

    def commit(self, last_seq: int | None, freed_projects: Collection[str]) -> None:
        self.db.execute("COMMIT")
        if last_seq is not None:
            self._last_seq = last_seq

    def rollback(self) -> None:
        if self._conn is not None and self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    def map_error(self, exc: Exception) -> CoordError | None:
        return map_sqlite_error(exc) if isinstance(exc, sqlite3.Error) else None

    def is_disk_fault(self, exc: Exception) -> bool:
        return is_disk_fault(exc)

    def close(self) -> None:
        conn = self._conn
        if conn is None:
            return
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as exc:
            log.warning("final checkpoint failed: %s", exc)
        conn.close()
        self._conn = None

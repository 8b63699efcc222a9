"""The SQLite file's integrity check, run beside serving instead of before it.

`PRAGMA quick_check` reads every page of the file: 4.9 s for a board of a million
tasks (2.4 GB), all of it added to every start, `kill -9` restarts included. What
SQLite's own recovery needs at start (the WAL index rebuilt from the WAL) happens
when the writer opens, and a file that is not a database, or whose header or schema
is unreadable, is still refused there. The full read runs from the moment the
daemon serves, on a read connection of its own in a worker thread, while writes
go on. Nothing is written onto the file until it passes:

- the writes made before the verdict stay in the WAL: the checkpointer copies
  nothing into the file until the check has passed (`passed`), and the writer
  neither checkpoints nor closes its connection (closing the last connection
  checkpoints) before then (`may_close`); a stop waits for the verdict;
- if the check finds damage, the daemon becomes a loud refuser: every write is
  answered -32603 with `data.reason: "store_damaged"` naming the damage and the
  way back (`coordd check`, a `coordd backup` copy), `server.info.store.check`
  says `damaged` (docs/PROTOCOL-1.2.md section 3c), `coord doctor` shows it,
  and the file is left as it was found, its WAL beside it.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import trio

from coordd.store.connections import RECOVERY_ADVICE, open_connection
from coordd_wire.errors import InternalError
from coordd_wire.server_info import StoreCheck

log = logging.getLogger(__name__)

#: How many of SQLite's lines about the damage are kept and shown.
SHOWN_PROBLEMS = 3


def quick_check(path: Path) -> list[str]:
    """SQLite's complaints about the file at `path` (empty: it is sound), on a read
    connection of its own."""
    try:
        conn = open_connection(path, query_only=True)
    except sqlite3.DatabaseError as exc:
        return [str(exc)]
    try:
        rows = conn.execute("PRAGMA quick_check(10)").fetchall()
    except sqlite3.DatabaseError as exc:  # "database disk image is malformed", an I/O error
        return [str(exc)]
    finally:
        conn.close()
    problems = [str(row[0]) for row in rows]
    return [] if problems == ["ok"] else problems


class IntegrityCheck:
    """One start's check of the file: its state for `server.info`, and what waits on it."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._state = "running"
        self._problems: list[str] = []
        #: Set once the file passed: the checkpointer may copy the WAL into it.
        self.passed = trio.Event()

    @property
    def wire(self) -> StoreCheck:
        return StoreCheck(state=self._state, problems=self._problems)

    def may_close(self) -> bool:
        """Whether the writer may close its connection, which checkpoints into the file."""
        return self._state == "ok"

    def refusal(self) -> InternalError:
        """What every write is answered once the file is found damaged."""
        return InternalError(
            f"the database {self._path} is damaged ({'; '.join(self._problems)}): this"
            " daemon refuses every write so as not to write onto it; "
            + RECOVERY_ADVICE.format(path=self._path),
            reason="store_damaged",
        )

    async def run(self, refuse_writes: Callable[[InternalError], None]) -> None:
        """Check the file in a worker thread; on damage, have the writer refuse writes.

        Not abandoned when the daemon stops: the stop waits for the verdict, since
        whether the writer may checkpoint at its close depends on it.
        """
        started = time.monotonic()
        problems = await trio.to_thread.run_sync(quick_check, self._path)
        took = time.monotonic() - started
        if problems:
            self._problems = problems[:SHOWN_PROBLEMS]
            self._state = "damaged"
            refusal = self.refusal()
            refuse_writes(refusal)
            log.critical("%s (the check took %.2f s)", refusal.message, took)
            return
        self._state = "ok"
        self.passed.set()
        log.info("the store's integrity check passed in %.2f s", took)

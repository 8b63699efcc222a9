"""How every SQLite connection of the daemon is opened, in one place."""

from __future__ import annotations

import sqlite3
from enum import StrEnum
from pathlib import Path

from coordd.limits import Limits
from coordd.store.sql import SQLITE_LAST_SEQ

SQLITE_BUSY, SQLITE_LOCKED, SQLITE_IOERR, SQLITE_FULL = 5, 6, 10, 13


def primary_error_code(exc: sqlite3.Error) -> int | None:
    """SQLite's primary result code for `exc` (extended codes folded), if it carries one."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


def is_busy(exc: sqlite3.Error) -> bool:
    """Another connection holds a lock this one needs."""
    return primary_error_code(exc) in (SQLITE_BUSY, SQLITE_LOCKED)


def is_disk_fault(exc: BaseException) -> bool:
    """The operating system failed a read, write or sync (SQLITE_IOERR and its extended codes).

    Not SQLITE_FULL: a full disk fails the write before anything is written,
    so retrying once space returns is safe (-32004 `disk_full`). After an I/O
    error the page cache may no longer say what the disk holds
    (docs/ARCHITECTURE.md, "After a disk error").
    """
    return isinstance(exc, sqlite3.Error) and primary_error_code(exc) == SQLITE_IOERR


class Durability(StrEnum):
    """`full`: a COMMIT survives power loss. `normal`: it survives kill -9 only."""

    FULL = "full"
    NORMAL = "normal"


def _unicode_lower(text: str | None) -> str | None:
    return None if text is None else text.lower()


class SqliteDb(sqlite3.Connection):
    """An SQLite connection as the shared SQL sees it (`coordd.store.sql.Db`)."""

    last_seq_sql = SQLITE_LAST_SEQ


def open_connection(path: Path, *, query_only: bool = False) -> SqliteDb:
    # isolation_level=None: no implicit DEFERRED transactions (Python 3.11);
    # every transaction is an explicit BEGIN. check_same_thread=False: the
    # connection is opened on one thread and used by another, never two at once.
    conn = sqlite3.connect(
        path,
        isolation_level=None,
        check_same_thread=False,
        cached_statements=256,
        factory=SqliteDb,
    )
    conn.execute(f"PRAGMA busy_timeout = {Limits.busy_timeout_ms}")
    # SQLite's lower() folds ASCII only; task.wait matches live events with
    # Python's str.lower(), so stored rows must be folded the same way.
    conn.create_function("unicode_lower", 1, _unicode_lower, deterministic=True)
    if query_only:
        conn.execute("PRAGMA query_only = 1")
    return conn


def open_writer_connection(path: Path, durability: Durability) -> SqliteDb:
    conn = open_connection(path)
    (mode,) = conn.execute("PRAGMA journal_mode = WAL").fetchone()
    if str(mode).lower() != "wal":
        conn.close()
        raise RuntimeError(f"could not put {path} in WAL mode (got {mode!r})")
    synchronous = "FULL" if durability is Durability.FULL else "NORMAL"
    conn.execute(f"PRAGMA synchronous = {synchronous}")
    # The automatic checkpoint runs inside COMMIT and stalls it for milliseconds;
    # the daemon checkpoints from its own connection instead (see Checkpointer).
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    # When the log restarts after a burst, shrink the file back to this size.
    conn.execute(f"PRAGMA journal_size_limit = {Limits.wal_size_limit_bytes}")
    return conn


class DatabaseUnusable(Exception):
    """The database file cannot be served: damaged, not a database, or unreadable."""


#: What to do about a damaged database, said with every refusal.
RECOVERY_ADVICE = (
    "run `coordd check --db {path}` for details; restore a copy made with"
    " `coordd backup` (stop coordd, move the damaged file and its -wal/-shm aside,"
    " put the copy in its place), or move it aside to start with an empty board"
)


def unusable(path: Path, exc: sqlite3.Error) -> DatabaseUnusable:
    """A clear refusal for an SQLite error met while opening or checking `path`."""
    return DatabaseUnusable(
        f"cannot use the database {path}: {exc}; " + RECOVERY_ADVICE.format(path=path)
    )


def verify_intact(conn: sqlite3.Connection, path: Path) -> None:
    """`PRAGMA quick_check` of a file about to be read whole (`coordd migrate`'s source).

    quick_check reads every page once but skips index-content comparison, so
    it costs a sequential read of the file (docs/CONFORMANCE.md has figures);
    the daemon runs it beside serving instead (`store_check`).
    """
    problems = [str(row[0]) for row in conn.execute("PRAGMA quick_check(10)").fetchall()]
    if problems != ["ok"]:
        shown = "; ".join(problems[:3])
        raise DatabaseUnusable(
            f"the database {path} is damaged (quick_check: {shown}); "
            + RECOVERY_ADVICE.format(path=path)
        )

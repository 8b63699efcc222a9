"""One daemon per database: an exclusive `flock` on `<db>.lock`, held for life.

The lock file also carries the daemon's record (`coordd_wire.record`):
its pid from the moment it holds the lock, and the socket it serves once
bound, so a client that finds no daemon where it looked can find this one.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from coordd_wire.paths import lock_path
from coordd_wire.record import MAX_RECORD_BYTES, format_record, parse_record


class DatabaseInUse(Exception):
    """Another live coordd holds the database's lock."""


class DatabaseLock:
    """The lock is named after the file the path resolves to, not the path given:
    `a.db -> x.db` and `x.db` are one database and must meet at one lock.
    (A hard link is a second name the path cannot reveal; docs/CONFORMANCE.md.)"""

    def __init__(self, db_path: Path) -> None:
        self.path = lock_path(db_path)
        self._fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            record = parse_record(os.pread(fd, MAX_RECORD_BYTES, 0))
            os.close(fd)
            holder = str(record.pid) if record else "unknown"
            serving = f", serving {record.socket}" if record and record.socket else ""
            raise DatabaseInUse(
                f"database {self.path.with_suffix('')} is in use by another coordd"
                f" (pid {holder}{serving})"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, format_record(os.getpid(), None), 0)
        self._fd = fd

    def record_socket(self, socket_path: Path) -> None:
        """Add the socket now served to the record (the pid line is rewritten unchanged).

        One `pwrite` of the whole record, then a trim: a reader sees the old
        record or the new one, never an empty file.
        """
        if self._fd is None:
            return
        record = format_record(os.getpid(), socket_path)
        os.pwrite(self._fd, record, 0)
        os.ftruncate(self._fd, len(record))

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None

"""One daemon per database: an exclusive `flock` on `<db>.lock`, held for life."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


class DatabaseInUse(Exception):
    """Another live coordd holds the database's lock."""


class DatabaseLock:
    """The lock is named after the file the path resolves to, not the path given:
    `a.db -> x.db` and `x.db` are one database and must meet at one lock.
    (A hard link is a second name the path cannot reveal; docs/CONFORMANCE.md.)"""

    def __init__(self, db_path: Path) -> None:
        resolved = db_path.resolve()
        self.path = resolved.with_name(resolved.name + ".lock")
        self._fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise DatabaseInUse(
                f"database {self.path.with_suffix('')} is in use by another coordd (pid {holder})"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None

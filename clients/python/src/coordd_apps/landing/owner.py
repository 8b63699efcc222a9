"""One lander per landing: a lock file a lander holds from joining the queue to its end.

An agent that retries `coord land` (its host timed the tool call out) runs a
second lander of the same branch; `land.enqueue` gives it the same entry, and
`land.start` the same fence. Two landers of one landing make the same throwaway
worktree and fail the landing between them. So each lander holds an `flock` on
`<git common dir>/coord-land-owners/<landing id>`, with its pid and start time
in it, from right after `land.enqueue` to its end; a second lander finds it
held and refuses, leaving the landing alone. The kernel releases the lock when
the lander dies, however it dies, so a killed lander's landing can be taken up
again at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: Where the lock files live, inside the common git dir.
OWNERS_DIR = "coord-land-owners"


@dataclass(frozen=True)
class Owner:
    """The lander holding a landing: its pid, and when it started (epoch seconds)."""

    pid: int
    since: float


class Owned(Exception):
    """Another lander that still runs holds this landing."""

    def __init__(self, owner: Owner) -> None:
        super().__init__(f"pid {owner.pid}")
        self.owner = owner


def _path(common: Path, landing_id: int) -> Path:
    return common / OWNERS_DIR / str(landing_id)


def holder(common: Path, landing_id: int) -> Owner | None:
    """The lander holding `landing_id`, if one runs (a look: nothing is taken)."""
    path = _path(common, landing_id)
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read(fd)
        return None  # free: its lander is gone
    finally:
        os.close(fd)


@contextlib.contextmanager
def holding(common: Path, landing_id: int) -> Iterator[None]:
    """Hold `landing_id` until the end, or raise `Owned` if another lander holds it."""
    path = _path(common, landing_id)
    path.parent.mkdir(exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Owned(_read(fd)) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {time.time():.0f}\n".encode(), 0)
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                path.unlink()  # still locked: a lander opening it now takes a gone file
    finally:
        os.close(fd)


def _read(fd: int) -> Owner:
    words = os.pread(fd, 64, 0).decode(errors="replace").split()
    try:
        return Owner(int(words[0]), float(words[1]))
    except (IndexError, ValueError):  # it is writing them this instant
        return Owner(0, 0.0)

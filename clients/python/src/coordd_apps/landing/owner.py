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
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: Where the lock files live, inside the common git dir.
OWNERS_DIR = "coord-land-owners"


@dataclass(frozen=True)
class Owner:
    """The lander holding a landing: its pid, when it started (epoch seconds), and the
    machine it runs on (host name and boot id; "" where unknown)."""

    pid: int
    since: float
    host: str = ""
    boot: str = ""

    def here(self) -> bool:
        """Whether it ran on this machine, since its last boot."""
        return self.host == socket.gethostname() and self.boot == boot_id()


def boot_id() -> str:
    """This boot's id (Linux), or "" where the system does not say."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


class Owned(Exception):
    """Another lander that still runs holds this landing."""

    def __init__(self, owner: Owner) -> None:
        super().__init__(f"pid {owner.pid}")
        self.owner = owner


def _path(common: Path, landing_id: int) -> Path:
    return common / OWNERS_DIR / str(landing_id)


def _look(common: Path, landing_id: int) -> tuple[bool, Owner] | None:
    """Whether `landing_id`'s lock is held, and its lander's record; None: no file.
    A look: the shared lock is tried and let go at once, nothing is taken."""
    try:
        fd = os.open(_path(common, landing_id), os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True, _read(fd)
        return False, _read(fd)
    finally:
        os.close(fd)


def holder(common: Path, landing_id: int) -> Owner | None:
    """The lander holding `landing_id`, if one runs (a look: nothing is taken)."""
    look = _look(common, landing_id)
    return look[1] if look is not None and look[0] else None


def gone(common: Path, landing_id: int) -> Owner | None:
    """The lander of `landing_id` when it ran on this machine and died without finishing:
    its file left, its lock free, its pid gone. None: it runs, finished, or is not known
    here (another machine's or clone's lander, or one from before a reboot)."""
    look = _look(common, landing_id)
    if look is None or look[0]:
        return None  # no file, or held: its lander runs (maybe stopped)
    lander = look[1]
    if lander.pid <= 0 or not lander.here() or _alive(lander.pid):
        return None  # a file not written yet, another machine's, or its pid still runs
    return lander


def dead(common: Path) -> list[tuple[int, Owner]]:
    """Every landing whose lander died here without finishing (`gone`), by id."""
    place = common / OWNERS_DIR
    if not place.is_dir():
        return []
    found = []
    for path in sorted(place.iterdir(), key=lambda p: p.name):
        if path.name.isdigit():
            lander = gone(common, int(path.name))
            if lander is not None:
                found.append((int(path.name), lander))
    return found


def clear(common: Path, landing_id: int) -> None:
    """Remove the file a dead lander left, once its landing is taken over (if no lander
    took it up meanwhile)."""
    path = _path(common, landing_id)
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        path.unlink()
    except (BlockingIOError, FileNotFoundError):
        pass
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


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
        me = f"{os.getpid()} {time.time():.0f} {socket.gethostname()} {boot_id() or '-'}"
        os.pwrite(fd, f"{me}\n".encode(), 0)
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                path.unlink()  # still locked: a lander opening it now takes a gone file
    finally:
        os.close(fd)


def _read(fd: int) -> Owner:
    words = os.pread(fd, 512, 0).decode(errors="replace").split()
    try:
        host, boot = (words[2], words[3]) if len(words) >= 4 else ("", "")
        return Owner(int(words[0]), float(words[1]), host, "" if boot == "-" else boot)
    except (IndexError, ValueError):  # it is writing them this instant
        return Owner(0, 0.0)

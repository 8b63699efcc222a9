"""The landing journal: what a lander is about to do to a target and its checkout.

Moving the target ref is one atomic compare-and-swap, but updating the files
of the worktree that has the target checked out is not: git rewrites them one
by one, and a lander killed meanwhile leaves some old, some new, the index at
the old commit and maybe a stale `index.lock`. So before the swap the lander
writes a journal (`<git common dir>/coord-land-journals/<target>.json`,
atomically: a temporary file, fsync, rename, fsync of the directory) naming the
ref, the old and new commits and the checkout; it marks the step it is in
(`move`, then `checkout`), and removes the journal when the checkout is done.
A journal that outlives its lander is how the next `coord land`, `coord land
--recover` and `coord doctor` learn a move was interrupted, and from where.

Who is alive is told by a lock, not a pid: the lander holds an exclusive
`flock` on `<target>.lock` from before it writes the journal until after it
removes it, and hands that descriptor to the git commands it runs in between.
The lock is free only once the lander and every git process it started are
gone (a `kill -9` of the lander alone leaves its `git read-tree` running to
its end, holding the lock), so whoever takes the lock and still finds a
journal knows nobody will touch that checkout but itself. The same lock keeps
a recovery and a live lander's move from running at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, unquote

import msgspec

#: Where the journals and their locks live, inside the common git dir (not in
#: `coord-land/`, whose directories `git.sweep` removes as landing worktrees).
JOURNAL_DIR = "coord-land-journals"
#: Seconds between attempts while waiting for another holder of the lock.
_LOCK_POLL_S = 0.05


class Lander(msgspec.Struct, frozen=True):
    """Whose landing the move is, so that whoever finishes it can record it with the
    daemon as that agent's landing, and complete its task."""

    agent: str
    project: str
    branch: str
    task: int | None = None


class Journal(msgspec.Struct, frozen=True):
    """One target's move in progress."""

    ref: str  # refs/heads/<target>
    old: str
    new: str
    #: The worktree that has the target checked out (None: none has).
    worktree: str | None
    #: "move": the ref may or may not have moved, the checkout is untouched;
    #: "checkout": the ref moved and the checkout is being brought to `new`.
    step: str
    landing: int
    pid: int
    host: str
    #: When the step began (seconds since the epoch): an `index.lock` older than a
    #: `checkout` step's start is not the lander's.
    since: float
    #: Whose landing it is (None: a journal that does not say).
    lander: Lander | None = None


class LockBusy(Exception):
    """Another process (a live lander, or a git command a dead one started) holds a
    target's journal lock."""


def directory(common_dir: Path) -> Path:
    return common_dir / JOURNAL_DIR


def journal_path(common_dir: Path, onto: str) -> Path:
    return directory(common_dir) / f"{quote(onto, safe='')}.json"


def lock_path(common_dir: Path, onto: str) -> Path:
    return directory(common_dir) / f"{quote(onto, safe='')}.lock"


def targets(common_dir: Path) -> list[str]:
    """The targets with a journal, whatever state their landers are in."""
    place = directory(common_dir)
    if not place.is_dir():
        return []
    return sorted(unquote(p.name[: -len(".json")]) for p in place.glob("*.json"))


def new_journal(
    *,
    onto: str,
    old: str,
    new: str,
    worktree: Path | None,
    landing: int,
    lander: Lander | None = None,
) -> Journal:
    return Journal(
        ref=f"refs/heads/{onto}", old=old, new=new,
        worktree=None if worktree is None else str(worktree), step="move",
        landing=landing, pid=os.getpid(), host=socket.gethostname(), since=time.time(),
        lander=lander,
    )  # fmt: skip


def read(common_dir: Path, onto: str) -> Journal | None:
    """The journal of `onto`, or None. An unreadable one is an error, not None: it means
    a move was interrupted, and guessing what it was would be worse than saying so."""
    try:
        data = journal_path(common_dir, onto).read_bytes()
    except FileNotFoundError:
        return None
    return msgspec.json.decode(data, type=Journal)


def write(common_dir: Path, onto: str, journal: Journal) -> None:
    """Replace the journal of `onto` atomically and durably (tmp, fsync, rename, fsync)."""
    path = journal_path(common_dir, onto)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as out:
        out.write(msgspec.json.encode(journal))
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)
    _sync_dir(path.parent)


def remove(common_dir: Path, onto: str) -> None:
    path = journal_path(common_dir, onto)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    _sync_dir(path.parent)


def _sync_dir(place: Path) -> None:
    fd = os.open(place, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def busy(common_dir: Path, onto: str) -> bool:
    """Whether a process holds `onto`'s journal lock now: a lander, or a git command it
    started, is still at work (a probe: it creates nothing)."""
    try:
        fd = os.open(lock_path(common_dir, onto), os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


@contextlib.contextmanager
def locked(common_dir: Path, onto: str, wait_s: float) -> Iterator[int]:
    """Hold `onto`'s journal lock; yield its descriptor (to pass to git commands, which
    then hold it too). Wait up to `wait_s` seconds for it (0: do not wait), else
    raise `LockBusy`."""
    path = lock_path(common_dir, onto)
    path.parent.mkdir(exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockBusy(str(path)) from None
                time.sleep(_LOCK_POLL_S)
        yield fd
    finally:
        os.close(fd)  # releases the lock (git children that inherited it may still hold it)

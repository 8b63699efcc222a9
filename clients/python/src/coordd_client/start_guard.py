"""What a client checks before it starts a daemon: that no other start is under way, and
that no daemon of the user's runs unannounced.

**One start at a time per user** (`start_lock`): see `autostart`'s module doc.

**No start beside a running daemon that has no record.** A client that finds
no daemon (its derived socket is silent, the rendezvous names nobody) starts
one. But the rendezvous can be empty while the user's board is live:
`~/.local/state/coordd` removed by a clean-up or a dotfiles reset takes the
records with it, and a surface with a stripped environment would then start
a second, empty board and answer from it. The daemon writes its records again
within `socket_check_interval_s` (`coordd.announce`); this closes that window
on the client's side: before it starts a daemon, a client looks for
`coordd serve` processes of its uid whose home is its own (Linux: `/proc`;
where there is none, only the daemon's rewrite closes the window), and while
one runs with no record, it waits for the record rather than start a board
beside it. One that never writes it (an older coordd, a home it cannot
write) is refused, naming its pid, once `ANNOUNCE_BOUND_S` has passed.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from coordd_wire.errors import DaemonUnavailable
from coordd_wire.rendezvous import home_state_dir, live_daemons, rendezvous_dir

#: Seconds a running daemon has to write its record again (it looks every 2 s).
ANNOUNCE_BOUND_S = 10.0
_PROC = Path("/proc")


@contextlib.contextmanager
def start_lock(environ: Mapping[str, str] | None = None) -> Iterator[None]:
    """Held while this user's daemon is started and until it answers: one start at a
    time, whatever environment each starter has. The file is `start.lock` beside the
    rendezvous (the uid and home directory place it; `$XDG_STATE_HOME` does not). The
    holder waits at most `READY_TIMEOUT_S` for its daemon, so a waiter's wait is
    bounded too. With no home to put it in, starts are not serialized (the database
    lock still keeps two daemons off one file)."""
    try:
        directory = home_state_dir(environ)
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(
            directory / "start.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
        )
    except (OSError, KeyError, RuntimeError):
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _is_daemon(words: list[bytes]) -> bool:
    """`python .../coordd serve ...` or `python -m coordd serve ...`; not the go-between
    that starts one (`starter.py`, whose arguments name the daemon's command)."""
    if not words or not os.path.basename(words[0]).startswith((b"python", b"coordd")):
        return False
    if any(os.path.basename(word) == b"starter.py" for word in words):
        return False
    return any(
        word == b"serve" and os.path.basename(words[i - 1]) == b"coordd"
        for i, word in enumerate(words)
        if i > 0
    )


def _environ_of(entry: Path) -> dict[str, str]:
    raw = (entry / "environ").read_bytes()
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {os.fsdecode(k): os.fsdecode(v) for k, v in pairs}


def running_daemons(environ: Mapping[str, str] | None = None) -> list[int]:
    """Pids of this uid's `coordd serve` processes whose rendezvous is this surface's
    (the same home), oldest pid first; [] where there is no `/proc`."""
    try:
        mine = rendezvous_dir(environ)
        entries = [entry for entry in _PROC.iterdir() if entry.name.isdigit()]
    except (OSError, RuntimeError):
        return []
    uid, me = os.getuid(), os.getpid()
    found = []
    for entry in entries:
        try:
            if int(entry.name) == me or entry.stat().st_uid != uid:
                continue
            if not _is_daemon((entry / "cmdline").read_bytes().rstrip(b"\0").split(b"\0")):
                continue
            if rendezvous_dir(_environ_of(entry)) == mine:
                found.append(int(entry.name))
        except (OSError, RuntimeError):  # gone meanwhile, or no home to compare
            continue
    return sorted(found)


def unannounced(environ: Mapping[str, str] | None = None) -> list[int]:
    """This user's running daemons with no record in the rendezvous."""
    running = running_daemons(environ)
    if not running:
        return []
    announced = {record.pid for record in live_daemons(environ)}
    return [pid for pid in running if pid not in announced]


def wait_for_records(
    socket_path: Path,
    environ: Mapping[str, str] | None = None,
    *,
    bound_s: float = ANNOUNCE_BOUND_S,
) -> bool:
    """Until every daemon of this user that runs has a record in the rendezvous (or has
    ended); True if there was one to wait for (the caller looks again). Raises
    `DaemonUnavailable` (`unannounced_daemon`) when one still has none after `bound_s`:
    a board started now would be a second one beside it."""
    deadline = time.monotonic() + bound_s
    waited = False
    while pending := unannounced(environ):
        if time.monotonic() > deadline:
            pids = " ".join(map(str, pending))
            raise DaemonUnavailable(
                f"no coordd answers on {socket_path}, and coordd (pid {pids}) runs as you"
                f" with no record in {rendezvous_dir(environ)}, so it cannot be found from"
                " here: not starting a second board beside it. A current coordd writes its"
                " record again within seconds when it is removed; this one did not (an older"
                " coordd, or a home it cannot write). Give this surface its socket (--socket,"
                f" or $COORDD_SOCKET), or stop it (`kill {pids}`) and retry",
                socket=str(socket_path),
                reason="unannounced_daemon",
                pids=pending,
            )
        waited = True
        time.sleep(0.05)
    return waited

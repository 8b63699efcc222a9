"""The daemon's record in its lock file: which process holds the database, and the socket it serves.

The lock file (`<db>.lock`, `paths.lock_path`) has always held the holder's
pid on its first line, for the "in use by another coordd (pid N)" refusal.
The second line is the socket the daemon serves, written once it is bound.
A client whose socket path has no daemon (a host that dropped
`$XDG_RUNTIME_DIR` from its children's environment) reads it to find the
daemon that holds the user's database instead of starting a second one
(docs/PROTOCOL-1.2.md). Nothing here trusts the record: a client still
checks that the pid lives and that the socket is this user's and answers.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from coordd_wire.rendezvous import process_alive

#: More than any pid and socket path (sun_path is at most 108 bytes) take.
MAX_RECORD_BYTES = 4096


class DaemonRecord(msgspec.Struct, frozen=True):
    pid: int
    #: None while the daemon is still starting (it holds the lock, not yet a socket).
    socket: Path | None


def format_record(pid: int, socket: Path | None) -> bytes:
    return f"{pid}\n{socket}\n".encode() if socket is not None else f"{pid}\n".encode()


def parse_record(raw: bytes) -> DaemonRecord | None:
    """The record, or None for an empty or garbled file (never raises)."""
    lines = raw.decode(errors="replace").split("\n")
    try:
        pid = int(lines[0].strip())
    except ValueError:
        return None
    if pid <= 0:
        return None
    socket = lines[1] if len(lines) > 1 and lines[1].startswith("/") else None
    return DaemonRecord(pid, Path(socket) if socket else None)


def read_record(lock_file: Path) -> DaemonRecord | None:
    """The record in a lock file, or None if there is none to read."""
    try:
        with open(lock_file, "rb") as handle:
            return parse_record(handle.read(MAX_RECORD_BYTES))
    except OSError:
        return None


def pid_alive(pid: int) -> bool:
    """Whether a running process of this user has that pid (another user's is not our
    daemon, and a zombie has ended: `rendezvous.process_alive`)."""
    return process_alive(pid, None)


# The board a socket serves: `<socket>.store`, beside the socket.
#
# A client that finds nobody on its socket (the daemon crashed) starts one;
# without this it would start one on the default database, and the agents
# on that socket would silently move to another, empty board. So a daemon
# that binds its socket writes which store it serves next to it (one line:
# `sqlite:<absolute path>`, or a team store's DSN without its password),
# removes it with the socket at a clean stop, and autostart starts that
# store or refuses, naming it. The socket's directory is private (0700,
# checked at bind), so nobody else can plant the file.

SQLITE_PREFIX = "sqlite:"


def store_record_path(socket_path: Path) -> Path:
    return socket_path.with_name(socket_path.name + ".store")


def format_store_record(location: str) -> bytes:
    return f"{location}\n".encode()


def read_store_record(socket_path: Path) -> str | None:
    """The store the daemon on `socket_path` served, or None (none recorded, or garbled)."""
    try:
        with open(store_record_path(socket_path), "rb") as handle:
            raw = handle.read(MAX_RECORD_BYTES)
    except OSError:
        return None
    line = raw.decode(errors="replace").split("\n", 1)[0].strip()
    return line or None

"""Finding the user's daemon when the socket PROTOCOL.md section 1 names has none.

Section 1 derives the default socket from `$XDG_RUNTIME_DIR`, and some hosts
drop that variable from the environment they give their children (the MCP
Inspector; Codex, for every MCP server; Cursor, which curates it). Such a
child derives `$TMPDIR/coordd-<uid>/coordd.sock` instead, finds nothing
there, and would start a second daemon on a second board. So, only when the
socket was derived (no `--socket`, no `$COORDD_SOCKET`) and nothing answers
on it, a client looks further before it gives up or autostarts
(docs/PROTOCOL-1.2.md section 1a):

1. the rendezvous (`protocol.rendezvous`): every live daemon of this user
   announces itself under the home directory, which every host passes on.
   One live board: it is used. More than one: the client cannot tell which
   one its user means, and refuses (`SeveralBoards`) naming them all and the
   command that ends the split; it never starts a third;
2. for a daemon of an older coordd, which does not announce itself: the
   record in the lock file of the user's default database
   (`protocol.record`), then `/run/user/<uid>/coordd/coordd.sock`.

A candidate is used only if its socket file is owned by this uid, its peer
is this uid (`protocol.peercred`) and it answers a ping within
`PROBE_TIMEOUT_S`. Anything else is skipped in silence: the fallback can
only find a daemon, never make a call fail that would not have failed,
except for the one refusal above.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

import msgspec

from coordd_client.client import Client
from coordd_client.protocol.errors import CoordError, DaemonUnavailable, SeveralBoards
from coordd_client.protocol.paths import (
    default_db_path,
    default_socket_path,
    lock_path,
    socket_is_explicit,
    usual_runtime_socket,
)
from coordd_client.protocol.record import DaemonRecord, pid_alive, read_record
from coordd_client.protocol.rendezvous import LiveDaemon, describe, live_daemons

#: Seconds a candidate socket has to answer a ping before it is passed over.
PROBE_TIMEOUT_S = 1.0


class Found(msgspec.Struct, frozen=True):
    socket: Path
    #: "rendezvous", "record" (the database's lock file) or "runtime dir" (/run/user/<uid>).
    source: str
    #: The board it serves, when the rendezvous said (None for an older daemon).
    board_id: str | None = None


def holder_record(
    environ: Mapping[str, str] | None = None, *, db_path: Path | None = None
) -> DaemonRecord | None:
    """The record of the live daemon that holds `db_path` (default: the user's
    default database), if any."""
    try:
        record = read_record(lock_path(db_path or default_db_path(environ)))
    except (OSError, RuntimeError):  # an unresolvable home or a symlink loop
        return None
    if record is None or not pid_alive(record.pid):
        return None
    return record


def _owned_socket(path: Path) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISSOCK(info.st_mode) and info.st_uid == os.geteuid()


def answers(path: Path, timeout_s: float = PROBE_TIMEOUT_S) -> bool:
    """A daemon of this user answers a ping on `path` (the file and the peer are ours)."""
    if not _owned_socket(path):
        return False
    try:
        with Client(path, timeout_s=timeout_s) as client:
            client.ping()
    except (CoordError, OSError):
        return False
    return True


def live_boards(
    environ: Mapping[str, str] | None = None, *, tried: Path | None = None
) -> list[LiveDaemon]:
    """The rendezvous's live daemons that answer here, but the one on `tried`."""
    return [
        record
        for record in live_daemons(environ)
        if Path(record.socket) != tried and answers(Path(record.socket))
    ]


def several_boards(live: list[LiveDaemon], tried: Path | None) -> SeveralBoards:
    """The refusal when more than one board is live and the socket was not given."""
    boards = {record.board_id: record for record in live}
    listed = "; ".join(describe(record) for record in boards.values())
    first = next(iter(boards.values()))
    where = f"no coordd answers on {tried}, and " if tried is not None else ""
    return SeveralBoards(
        f"{where}{len(boards)} of your boards are live ({listed}): the socket was not given,"
        " so this client cannot tell which one you mean and starts none. Pin the one you"
        f" mean (--socket {first.socket}, or COORDD_SOCKET; `coord setup <host>` pins it for"
        " a host), or stop the one nobody should use (`kill <its pid>`); `coord doctor`"
        " shows which surfaces use which",
        socket=None if tried is None else str(tried),
        boards=[
            {"board_id": r.board_id, "socket": r.socket, "store": r.store, "pid": r.pid}
            for r in boards.values()
        ],
    )


def discover(
    environ: Mapping[str, str] | None = None, *, tried: Path | None = None
) -> Found | None:
    """The user's daemon found outside section 1's order, or None.

    `tried` is the socket that already failed; it is not probed again. Raises
    `SeveralBoards` when the rendezvous shows more than one live board.
    """
    live = live_boards(environ, tried=tried)
    if len({record.board_id for record in live}) > 1:
        raise several_boards(live, tried)
    if live:
        return Found(Path(live[0].socket), "rendezvous", live[0].board_id)
    candidates: list[tuple[Path, str]] = []
    record = holder_record(environ)
    if record is not None and record.socket is not None:
        candidates.append((record.socket, "record"))
    usual = usual_runtime_socket()
    if usual is not None:
        candidates.append((usual, "runtime dir"))
    seen = {tried} if tried is not None else set()
    for path, source in candidates:
        if path in seen:
            continue
        seen.add(path)
        if answers(path):
            return Found(path, source)
    return None


def connects(path: Path) -> bool:
    """Something of ours accepts on `path` (no ping: the caller's own call will tell)."""
    try:
        Client(path, timeout_s=PROBE_TIMEOUT_S).connect().close()
    except DaemonUnavailable:
        return False
    except CoordError:
        # A socket served by another uid is no daemon of ours, but it must be
        # refused loudly by the caller's own connect, not routed around.
        return True
    return True


class SocketRoute(msgspec.Struct, frozen=True):
    """Where a client looks for the daemon: section 1's path, and whether it was asked for."""

    #: PROTOCOL.md section 1's answer; also where autostart starts a daemon.
    path: Path
    #: `--socket` or `$COORDD_SOCKET`: that socket only, never a fallback.
    explicit: bool

    @classmethod
    def resolve(
        cls,
        explicit: str | os.PathLike[str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> SocketRoute:
        return cls(
            Path(default_socket_path(explicit, environ)), socket_is_explicit(explicit, environ)
        )

    def fallback(self, environ: Mapping[str, str] | None = None) -> Found | None:
        """The daemon found elsewhere when `path` has none (never for an explicit socket)."""
        if self.explicit:
            return None
        return discover(environ, tried=self.path)

    def locate(self, environ: Mapping[str, str] | None = None) -> Path:
        """The socket to use now: `path` if it was asked for or something accepts on it,
        else a daemon found by `fallback`, else `path` (where one may be started)."""
        if self.explicit:
            return self.path
        if connects(self.path):
            self.require_one_board(environ)
            return self.path
        found = self.fallback(environ)
        return found.socket if found is not None else self.path

    def require_one_board(self, environ: Mapping[str, str] | None = None) -> None:
        """Refuse a derived socket while more than one board of this user is live.

        A daemon answers on the derived socket, but another environment's surfaces
        may reach another board: this one would then work on one half of a split
        board without a word. Read from the rendezvous alone (a directory and its
        small files, no round trip), so every call can afford it; never for an
        asked-for socket, whose user said which board they mean.
        """
        if self.explicit:
            return
        live = live_daemons(environ)
        if len({record.board_id for record in live}) > 1:
            raise several_boards(live, None)

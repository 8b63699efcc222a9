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
   The board this surface means (its tab's, else the user's board) is used;
   else the one live board of the user's. A board started on purpose beside
   the user's (its own store and socket: `separate` in its record) is never
   taken for it: with only such boards live, the user's board is started, or
   the client refuses (`board_not_running`) naming them. More than one board
   of the user's and nothing to say which: the client refuses
   (`SeveralBoards`) naming them all and the command that ends the split; it
   never starts a third;
2. for a daemon of an older coordd, which does not announce itself: the
   record in the lock file of the user's default database
   (`protocol.record`), then `/run/user/<uid>/coordd/coordd.sock`.

A candidate is used only if its socket file is owned by this uid, its peer
is this uid (`protocol.peercred`) and it answers a ping within
`PROBE_TIMEOUT_S`; the rendezvous's candidates are probed all at once
(`protocol.probe`), so sockets that accept and never answer cost that bound
once per look, however many records name them. Anything else is skipped in silence: the fallback can
only find a daemon, never make a call fail that would not have failed,
except for the one refusal above.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import msgspec

from coordd_client import tabs
from coordd_wire.errors import CoordError, DaemonUnavailable, SeveralBoards
from coordd_wire.paths import (
    default_db_path,
    default_socket_path,
    lock_path,
    socket_is_explicit,
    usual_runtime_socket,
)
from coordd_wire.peercred import connect_same_user
from coordd_wire.probe import PROBE_TIMEOUT_S, answering
from coordd_wire.record import DaemonRecord, pid_alive, read_record
from coordd_wire.rendezvous import LiveDaemon, describe, live_daemons, users_board


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


def answers(path: Path, timeout_s: float = PROBE_TIMEOUT_S) -> bool:
    """A daemon of this user answers a ping on `path` (the file and the peer are ours).

    One `ping` frame on a socket of its own (`protocol.probe`), not through
    `client.Client`: the client looks here when its socket fails, so this module
    builds on the wire alone."""
    return path in answering([path], timeout_s)


def live_boards(
    environ: Mapping[str, str] | None = None, *, tried: Path | None = None
) -> list[LiveDaemon]:
    """The rendezvous's live daemons that answer here, but the one on `tried`: all
    probed at once (`protocol.probe`), so records whose sockets never answer cost one
    `PROBE_TIMEOUT_S` together."""
    records = [record for record in live_daemons(environ) if Path(record.socket) != tried]
    return _answering(records)


def _answering(records: list[LiveDaemon]) -> list[LiveDaemon]:
    up = answering((Path(record.socket) for record in records), PROBE_TIMEOUT_S)
    return [record for record in records if Path(record.socket) in up]


def preferred_board(environ: Mapping[str, str] | None = None) -> str | None:
    """The board this surface means when several are live: its tab's (the board the
    tab's first session start reached), else the user's board (`rendezvous.users_board`)."""
    tab = tabs.find(environ)
    if tab is not None and tab.board is not None:
        return tab.board
    board = users_board(environ)
    return None if board is None else board.board_id


def choose(live: list[LiveDaemon], tried: Path | None, prefer: str | None) -> LiveDaemon:
    """The one live daemon to use: the preferred board, else the only board of the user's
    live (a board started on purpose, `LiveDaemon.separate`, is never taken for it);
    raises `SeveralBoards` when neither tells, and `DaemonUnavailable`
    (`board_not_running`) when only separate boards are live."""
    for record in live:
        if prefer is not None and record.board_id == prefer:
            return record
    yours = [record for record in live if not record.separate]
    if len({record.board_id for record in yours}) == 1:
        return yours[0]
    if not yours:
        raise yours_is_down(live, tried, prefer)
    raise several_boards(yours, tried, prefer)


def several_boards(
    live: list[LiveDaemon], tried: Path | None, prefer: str | None = None
) -> SeveralBoards:
    """The refusal when more than one board is live, the socket was not given, and neither
    the surface's tab nor the user's board record says which one is meant."""
    boards = {record.board_id: record for record in live}
    listed = "; ".join(describe(record) for record in boards.values())
    where = f"no coordd answers on {tried}, and " if tried is not None else ""
    example = next(iter(boards.values())).socket
    yours = (
        f" Your board is {prefer}, which is not among them: start it with `coordd serve`."
        if prefer is not None
        else ""
    )
    return SeveralBoards(
        f"{where}{len(boards)} of your boards are live ({listed}), and nothing says which one"
        f" this surface means, so it uses and starts none.{yours} Stop the one nobody should"
        " use (`kill <its pid>`: a clean stop), or give this surface the socket of the one"
        f" you mean (e.g. --socket {example}, or $COORDD_SOCKET in its environment);"
        " `coord doctor` names them and which surface reaches which",
        socket=None if tried is None else str(tried),
        boards=[
            {"board_id": r.board_id, "socket": r.socket, "store": r.store, "pid": r.pid}
            for r in boards.values()
        ],
    )


def yours_is_down(
    live: list[LiveDaemon], tried: Path | None, prefer: str | None
) -> DaemonUnavailable:
    """No daemon serves the preferred board (or, with none preferred, no board of the
    user's is live), and the boards that are live are others: a surface is not captured
    by them (a scratch daemon on a file of its own), it starts the user's board if it may."""
    listed = "; ".join(describe(record) for record in live)
    yours = "your board" if prefer is None else f"your board {prefer}"
    return DaemonUnavailable(
        f"no coordd answers on {tried}, and {yours} is not running (start it:"
        f" `coordd serve`); other boards are live ({listed}): give --socket to use one of"
        " them on purpose",
        socket=None if tried is None else str(tried),
        reason="board_not_running",
        board_id=prefer,
    )


def discover(
    environ: Mapping[str, str] | None = None,
    *,
    tried: Path | None = None,
    prefer: str | None = None,
) -> Found | None:
    """The user's daemon found outside section 1's order, or None.

    `tried` is the socket that already failed; it is not probed again. `prefer` is the
    board the caller means (default: `preferred_board`). Raises `SeveralBoards` when
    more than one board is live and none is the preferred one, and `DaemonUnavailable`
    (`board_not_running`) when the preferred board is not live but others are, or when
    the only boards live are separate ones (`LiveDaemon.separate`).
    """
    live = live_boards(environ, tried=tried)
    if live:
        if prefer is None:
            prefer = preferred_board(environ)
        if prefer is not None or any(not record.separate for record in live):
            chosen = choose(live, tried, prefer)
            if prefer is not None and chosen.board_id != prefer:
                raise yours_is_down(live, tried, prefer)
            return Found(Path(chosen.socket), "rendezvous", chosen.board_id)
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
    if live:  # separate boards only: none of them is the user's
        raise yours_is_down(live, tried, prefer)
    return None


def connects(path: Path) -> bool:
    """Something of ours accepts on `path` (no ping: the caller's own call will tell)."""
    try:
        connect_same_user(path).close()
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

    def fallback(
        self, environ: Mapping[str, str] | None = None, *, prefer: str | None = None
    ) -> Found | None:
        """The daemon found elsewhere when `path` has none (never for an explicit socket)."""
        if self.explicit:
            return None
        return discover(environ, tried=self.path, prefer=prefer)

    def locate(self, environ: Mapping[str, str] | None = None, *, may_start: bool = True) -> Path:
        """The socket to use now: `path` if it was asked for, or if something accepts on
        it and no other board is live that this surface means (`rerouted`); else a
        daemon found by `fallback`; else `path` (where one may be started). `may_start`:
        the caller would start a daemon there: the user's board being down while another
        board is live is then no refusal (`yours_is_down`), the caller starts the user's."""
        if self.explicit:
            return self.path
        if connects(self.path):
            return self.rerouted(environ)
        try:
            found = self.fallback(environ)
        except DaemonUnavailable as down:
            if may_start and down.data.get("reason") == "board_not_running":
                return self.path
            raise
        return found.socket if found is not None else self.path

    def rerouted(
        self, environ: Mapping[str, str] | None = None, *, prefer: str | None = None
    ) -> Path:
        """Where to go when a daemon answers on the derived `path`: there, while it serves
        the user's one live board; else the live board this surface means (its tab's, or
        the user's board); else `SeveralBoards`.

        A daemon answers on the derived socket, but another environment's surfaces may
        reach another board: this one would then work on one half of a split board
        without a word. The rendezvous is read (a directory and its small files, no
        round trip), so every call can afford it; the live daemons are probed only when
        it shows more than one board. Never for an asked-for socket.
        """
        if self.explicit:
            return self.path
        records = live_daemons(environ)
        if len({record.board_id for record in records if not record.separate}) <= 1:
            return self.path
        live = _answering(records)
        if len({record.board_id for record in live if not record.separate}) <= 1:
            return self.path
        if prefer is None:
            prefer = preferred_board(environ)
        chosen = choose(live, None, prefer)
        if any(Path(r.socket) == self.path and r.board_id == chosen.board_id for r in live):
            return self.path  # the board meant is the one answering here
        return Path(chosen.socket)

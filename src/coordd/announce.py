"""The daemon's side of the rendezvous (`coordd_wire.rendezvous`).

Once its socket is bound, a daemon announces itself where every surface of
its user looks, whatever environment a host gave that surface; a daemon on
the user's default store also records that store as the user's board, which
a client that must start a daemon starts. Neither write may stop a daemon
that serves: a home directory that cannot be written is logged loudly, and
the surfaces with a full environment still find the daemon by section 1.

Both records are kept while the daemon serves (`Announcement.keep`): a user
who removes `~/.local/state/coordd` (a clean-up, a dotfiles reset) removes
them, and a surface with a stripped environment would then find no board and
start a second, empty one. A stat of each per `socket_check_interval_s` notices
it, and the records are written again.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import trio

from coordd.config import DaemonConfig
from coordd_wire.probe import PROBE_TIMEOUT_S, answering
from coordd_wire.record import SQLITE_PREFIX
from coordd_wire.rendezvous import (
    LiveDaemon,
    UsersBoard,
    announce,
    describe,
    live_daemons,
    process_started,
    record_users_board,
    users_board_path,
    withdraw,
)

log = logging.getLogger(__name__)


class Announcement:
    """This daemon's record in the rendezvous, from bind to stop."""

    def __init__(self) -> None:
        self._path: Path | None = None
        self._record: LiveDaemon | None = None
        #: The user's board record this daemon keeps (None: a separate board keeps none).
        self._board: UsersBoard | None = None

    def publish(self, socket: Path, board_id: str, store: str, *, users_board: bool) -> None:
        """Announce this daemon; a daemon started as the user's also records its board.
        One that is not (its own store and socket, on purpose) is marked separate."""
        pid = os.getpid()
        self._record = LiveDaemon(
            pid=pid,
            started=process_started(pid),
            socket=str(socket),
            board_id=board_id,
            store=store,
            separate=not users_board,
        )
        if users_board:
            self._board = UsersBoard(store=store, board_id=board_id)
        self._write(complain=True)

    def _write(self, *, complain: bool) -> bool:
        """Write both records, each on its own; False (logged if `complain`) when the home
        refuses either."""
        assert self._record is not None
        failed: list[str] = []
        try:
            self._path = announce(self._record)
        except (OSError, KeyError) as exc:  # KeyError: no home, no password entry
            failed.append(str(exc))
        try:
            if self._board is not None:
                record_users_board(self._board)
        except (OSError, KeyError) as exc:
            failed.append(str(exc))
        if failed and complain:
            log.error(
                "cannot announce this daemon in the rendezvous (%s): surfaces whose host"
                " strips $XDG_RUNTIME_DIR will not find it; give them --socket %s",
                "; ".join(failed),
                self._record.socket,
            )
        return not failed

    def missing(self) -> bool:
        """Whether this daemon's record or the board record it keeps is gone (a stat each)."""
        if self._record is None:
            return False
        try:
            if self._path is None or not self._path.exists():
                return True
            return self._board is not None and not users_board_path().exists()
        except (OSError, KeyError):
            return False

    async def keep(self, interval_s: float) -> None:
        """Every `interval_s`, write the records again if they were removed while this
        daemon serves; a refusal is logged once, until a write succeeds again."""
        complained = False
        while True:
            await trio.sleep(interval_s)
            if not self.missing():
                continue
            if self._write(complain=not complained):
                log.warning(
                    "this daemon's rendezvous records were removed while it serves;"
                    " wrote them again (%s)",
                    self._path,
                )
                complained = False
            else:
                complained = True

    def withdraw(self) -> None:
        self._record = None
        if self._path is not None:
            withdraw(self._path)
            self._path = None


def second_board_refusal(config: DaemonConfig) -> str | None:
    """Why this daemon must not start, if it would be a second board of the user's own.

    A daemon started as the user's (`config.users_board`: `make run`, `coordd serve` with
    no flags) while another board of theirs is live splits the agents: surfaces whose
    host gives them another environment would reach one board or the other. The same
    database is left to its lock (which names the holder); a daemon on a store or socket
    asked for is a board on purpose, and only logs that others are live.

    A board started on purpose (`LiveDaemon.separate`) is never the user's, so it does
    not count. Another board counts only if its daemon answers on its socket (all
    probed at once, `protocol.probe`): a record's live pid may be a stopped or stuck
    process, and where a zombie's state cannot be read (no `/proc`) a dead daemon's pid
    still looks alive.
    """
    try:
        others = [r for r in live_daemons() if r.pid != os.getpid()]
    except (OSError, KeyError):
        return None
    mine = None if config.store_dsn is not None else SQLITE_PREFIX + str(config.db_path)
    others = [r for r in others if r.store != mine and not r.separate]
    up = answering((Path(r.socket) for r in others), PROBE_TIMEOUT_S)
    others = [r for r in others if Path(r.socket) in up]
    if not others:
        return None
    listed = "; ".join(describe(r) for r in others)
    if not config.users_board:
        log.warning("other boards of this user are live (%s): this one is separate", listed)
        return None
    return (
        f"another of your boards is live ({listed}): a second one would split your agents"
        " between two boards. Use that one (it is already reachable from every surface),"
        " or stop it first (`kill <its pid>`: a clean stop), or run this daemon as a"
        " separate board on purpose with --db (or --store) and --socket"
    )

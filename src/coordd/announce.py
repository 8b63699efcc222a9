"""The daemon's side of the rendezvous (`coordd_wire.rendezvous`).

Once its socket is bound, a daemon announces itself where every surface of
its user looks, whatever environment a host gave that surface; a daemon on
the user's default store also records that store as the user's board, which
a client that must start a daemon starts. Neither write may stop a daemon
that serves: a home directory that cannot be written is logged loudly, and
the surfaces with a full environment still find the daemon by section 1.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

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
    withdraw,
)

log = logging.getLogger(__name__)


class Announcement:
    """This daemon's record in the rendezvous, from bind to stop."""

    def __init__(self) -> None:
        self._path: Path | None = None

    def publish(self, socket: Path, board_id: str, store: str, *, users_board: bool) -> None:
        pid = os.getpid()
        record = LiveDaemon(
            pid=pid,
            started=process_started(pid),
            socket=str(socket),
            board_id=board_id,
            store=store,
        )
        try:
            self._path = announce(record)
            if users_board:
                record_users_board(UsersBoard(store=store, board_id=board_id))
        except (OSError, KeyError) as exc:  # KeyError: no home, no password entry
            log.error(
                "cannot announce this daemon in the rendezvous (%s): surfaces whose host strips"
                " $XDG_RUNTIME_DIR will not find it; give them --socket %s",
                exc,
                socket,
            )

    def withdraw(self) -> None:
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

    Another board counts only if its daemon answers on its socket (all probed at once,
    `protocol.probe`): a record's live pid may be a stopped or stuck process, and where
    a zombie's state cannot be read (no `/proc`) a dead daemon's pid still looks alive.
    """
    try:
        others = [r for r in live_daemons() if r.pid != os.getpid()]
    except (OSError, KeyError):
        return None
    mine = None if config.store_dsn is not None else SQLITE_PREFIX + str(config.db_path)
    others = [r for r in others if r.store != mine]
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

"""The daemon's side of the rendezvous (`coordd_client.protocol.rendezvous`).

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

from coordd_client.protocol.rendezvous import (
    LiveDaemon,
    UsersBoard,
    announce,
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
        except OSError as exc:
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

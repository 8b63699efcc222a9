"""What a daemon is started with: one typed record, shared by the daemon and its store."""

from __future__ import annotations

import hashlib
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from coordd.limits import Limits, Retention
from coordd.store.connections import Durability


@dataclass
class DaemonConfig:
    db_path: Path
    socket_path: Path
    durability: Durability = Durability.FULL
    limits: Limits = field(default_factory=Limits)
    retention: Retention = field(default_factory=Retention)
    handle_signals: bool = True
    #: SQLite max_page_count for the writer: a hard cap on the database's size.
    max_db_pages: int | None = None
    #: Team mode: a `postgresql://` DSN (or libpq key=value string); None is SQLite.
    store_dsn: str | None = None
    #: This daemon's name on the team store (`--node`); default: `default_node_name`.
    node: str | None = None
    #: This daemon is the user's own: started on the default store (no --store, --db,
    #: $COORDD_STORE or $COORDD_DB) or on the derived socket (no --socket or
    #: $COORDD_SOCKET). It records its store as the user's board, and refuses to start
    #: beside another live board (`coordd.announce`).
    users_board: bool = False
    #: In-process tests only: seconds added to the team store's clock.
    store_time_shift: Callable[[], float] | None = None

    @property
    def node_name(self) -> str:
        return self.node or default_node_name(self.socket_path)


def default_node_name(socket_path: Path) -> str:
    """The host name and a short hash of the socket: two daemons on one host are two nodes."""
    digest = hashlib.sha256(str(socket_path).encode()).hexdigest()[:6]
    return f"{socket.gethostname()}-{digest}"

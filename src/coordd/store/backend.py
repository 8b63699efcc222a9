"""What a store brings to the daemon, whichever it is: the two seams a backend meets.

`Board` is the daemon's side (where committed events go), `Backend` the store's
(its start and stop hooks). They sit apart from `backends`, which picks one, so
that each backend imports these and nothing imports back up (`backends` imports
the team's backend only when a `postgresql://` store is chosen).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import trio

from coordd.clock import Clock
from coordd.store.readers import Readers
from coordd.store.transaction import CommittedEvent
from coordd.store.write_store import WriteStore
from coordd.store.writer import Writer
from coordd_wire.server_info import StoreCheck

if TYPE_CHECKING:
    from coordd.store.postgres.presence import Peer


class Board(Protocol):
    """The daemon's side of a store: where committed events go, and whom to tell."""

    def publish(self, events: list[CommittedEvent]) -> None:
        """Events in seq order, to subscribers, waiters and waiting reservations."""
        ...

    def poke_reservations(self, project: str | None) -> None:
        """Another daemon released reservations in `project` (None: maybe anywhere)."""
        ...

    def subscribers_keep_after(self) -> int:
        """Events after this seq may still be owed to one of this daemon's subscribers."""
        ...

    def lost_store(self, why: str) -> None:
        """The store took this daemon's place away (team mode): stop."""
        ...


class Backend(Protocol):
    """What one kind of store brings to the daemon, and its start and stop hooks."""

    #: `server.info`'s `store.backend`: "sqlite" or "postgresql".
    name: str
    #: What `server.info` and the log call the store: the file, or the DSN sans password.
    location: str
    #: What `<socket>.store` names: `sqlite:<path>`, or the DSN without its password.
    recorded: str
    #: The SQLite file (`server.info`'s `db_path`); None on PostgreSQL.
    db_path: Path | None
    #: This daemon's name on the store.
    node: str
    clock: Clock
    write_store: WriteStore
    readers: Readers
    #: Told each write group's instant (team mode: the database's clock follows it).
    on_instant: Callable[[datetime], None] | None

    def lock(self) -> None:
        """Before anything opens: make sure this daemon is the store's only one here."""
        ...

    async def open(self, last_committed_seq: int) -> None:
        """After the writer opened (recovery, migrations): the rest of the store."""
        ...

    def served(self, socket_path: Path) -> None:
        """The socket is bound at `socket_path`: record it where clients look."""
        ...

    def on_commit(self, events: list[CommittedEvent]) -> None:
        """This daemon's writer committed `events` (on the trio thread)."""
        ...

    def peers(self) -> list[Peer]:
        """The other daemons live on this store."""
        ...

    async def look_for_lapses(self) -> bool:
        """Whether the reaper's write group has anything to do (see `run_reaper`)."""
        ...

    def keep_after(self) -> int:
        """Events after this seq may still be owed to a subscriber of any daemon on the store."""
        ...

    async def start(self, nursery: trio.Nursery, writer: Writer) -> None:
        """The store's background duties, in `nursery`; returns when they run."""
        ...

    async def verify(self, writer: Writer) -> None:
        """Once serving: check the store's integrity (docs/PROTOCOL-1.2.md section 3c),
        telling `writer` to refuse writes if it is damaged; returns with the verdict."""
        ...

    def check(self) -> StoreCheck | None:
        """That check as `server.info` says it; None for a store without one."""
        ...

    def may_close(self) -> bool:
        """Whether the writer may close its connection at the end (SQLite: closing
        checkpoints into the file, which must have passed its check first)."""
        ...

    async def stop(self) -> None:
        """After the writer stopped: stop the duties, close the rest."""
        ...

    def release(self) -> None:
        """Last of all: let another daemon have the store."""
        ...

"""`server.info`'s result (PROTOCOL.md section 6) and the members coordd adds to it.

`coordd_wire.wire` names these too, so a caller imports every result type from one
place; they live here, beside each other, because the answer is one noun.
"""

from __future__ import annotations

from typing import ClassVar

import msgspec


class StoreCheck(msgspec.Struct, frozen=True, kw_only=True):
    """The start-up integrity check of an SQLite store, run while the daemon serves
    (docs/PROTOCOL-1.2.md section 3c, feature `store_check`)."""

    #: "running", "ok" or "damaged" (every write is then refused).
    state: str
    #: SQLite's first lines about the damage; empty unless damaged.
    problems: list[str] = []


class StoreInfo(msgspec.Struct, frozen=True, kw_only=True):
    #: "sqlite" or "postgresql" (team mode).
    backend: str
    #: The SQLite file, or the PostgreSQL DSN without its password.
    location: str
    #: 1.2 (feature `store_check`): the SQLite file's integrity check; null on
    #: PostgreSQL, absent from an older daemon.
    check: StoreCheck | None = None


class PeerInfo(msgspec.Struct, frozen=True, kw_only=True):
    """Another live daemon on the same team store."""

    node: str
    last_seen: str


class WriterInfo(msgspec.Struct, frozen=True, kw_only=True):
    """What the daemon's writer has done (beyond PROTOCOL.md, additive)."""

    transactions: int
    commands: int
    largest_group: int
    queued: int


class QueueInfo(msgspec.Struct, frozen=True, kw_only=True):
    """Acquires waiting in a queue, and the tries they made (beyond PROTOCOL.md)."""

    waiting: int
    attempts: int


class StalledInfo(msgspec.Struct, frozen=True, kw_only=True):
    """1.2 section 3a (feature `stalled_connections`): connections whose requests the
    daemon is not reading because their clients are not reading their answers."""

    connections: int
    #: Answers owed to those connections: request frames read, answers not yet written.
    answers: int


class ReadersInfo(msgspec.Struct, frozen=True, kw_only=True):
    """1.2 section 3b (feature `reader_shares`): the reader pool scans run on, and how
    fairly it has been shared since the daemon started."""

    #: Connections in the pool.
    size: int
    #: How many of them one client connection may hold or wait for at once.
    per_connection: int
    #: Reads given a pool connection so far.
    admitted: int
    #: The most one client connection held or waited for at once (never above
    #: `per_connection`).
    most_held_by_one: int
    #: The most reads already waiting for a pool connection when another read
    #: asked for one: the reads served before it.
    longest_queue_ahead: int


class ServerInfo(msgspec.Struct, frozen=True, kw_only=True):
    version: str
    protocol: int
    pid: int
    #: The SQLite file; None in team mode.
    db_path: str | None
    started_at: str
    counts: dict[str, int]
    last_seq: int
    #: Protocol 1.1 features the daemon serves (empty from a 1.0 daemon).
    features: list[str] = msgspec.field(default_factory=list)
    SINCE_1_1: ClassVar[frozenset[str]] = frozenset({"features"})
    #: Team mode additions (absent from older daemons).
    store: StoreInfo | None = None
    node: str | None = None
    peers: list[PeerInfo] = msgspec.field(default_factory=list)
    #: 1.2 section 1b (feature `board_id`): the store's id, the same on every node of
    #: a team store and kept by `coordd migrate`; None from an older daemon.
    board_id: str | None = None
    #: 1.2 section 1c (feature `build_id`): the code the daemon loaded at its start
    #: (`coordd_wire.build`); a client compares it with the code installed now.
    build: str | None = None
    #: Beyond PROTOCOL.md (additive; absent from older daemons): what the writer, the
    #: waits, the subscriptions and the reservation and slot queues are doing.
    writer: WriterInfo | None = None
    waiters: int = 0
    message_waiters: int = 0
    subscriptions: int = 0
    reservations: QueueInfo | None = None
    slots: QueueInfo | None = None
    #: 1.2 section 3a (feature `stalled_connections`); None from an older daemon.
    stalled: StalledInfo | None = None
    #: 1.2 section 3b (feature `reader_shares`); None from an older daemon.
    readers: ReadersInfo | None = None

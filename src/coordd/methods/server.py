"""`ping` and `server.info`."""

from __future__ import annotations

from typing import Any

from coordd.methods.registry import Services, Session, inline_method, method
from coordd.store import reads
from coordd.store.readers import Readers
from coordd_wire import features, method_table
from coordd_wire import params as P
from coordd_wire.server_info import (
    PeerInfo,
    QueueInfo,
    ReadersInfo,
    ServerInfo,
    StalledInfo,
    StoreInfo,
    WriterInfo,
)
from coordd_wire.wire import PingResult

#: The protocol 1.1 features served (PROTOCOL.md section 6, `server.info`), then
#: the 1.2 ones (docs/PROTOCOL-1.2.md).
#: (Declared once, with where each is written down, in `coordd_wire.features`.)
FEATURES = features.NAMES

#: The methods each feature brings, derived from the method table (each entry names
#: its feature): docs/PROTOCOL.md's reference and tests/unit/test_method_registry.py
#: read it here beside `FEATURES`.
FEATURE_METHODS = method_table.FEATURE_METHODS


@inline_method("ping")
def ping(services: Services, p: P.NoParams) -> PingResult:
    return PingResult(pong=True)


@method("server.info")
async def server_info(services: Services, p: P.NoParams, session: Session) -> ServerInfo:
    counts, last_seq = await services.readers.run(_counts_and_seq, share=session.reads)
    stats = services.writer.statistics()
    store = services.store
    return ServerInfo(
        version=services.version,
        protocol=1,
        # PROTOCOL.md section 6: the 1.1 additions this daemon implements.
        features=list(FEATURES),
        pid=services.pid,
        db_path=None if store.db_path is None else str(store.db_path),
        board_id=services.board_id,
        build=services.build,
        store=StoreInfo(backend=store.name, location=store.location, check=store.check()),
        node=store.node,
        peers=[PeerInfo(node=peer.node, last_seen=peer.last_seen) for peer in store.peers()],
        started_at=services.started_at,
        counts=counts,
        last_seq=last_seq,
        # Beyond PROTOCOL.md (additive): what the writer and the hub are doing.
        writer=WriterInfo(
            transactions=stats.transactions,
            commands=stats.commands,
            largest_group=stats.largest_group,
            queued=stats.queued,
        ),
        waiters=services.hub.waiter_count,
        message_waiters=len(services.hub.listeners),  # issue 34 (section 12)
        subscriptions=services.hub.subscription_count,
        reservations=QueueInfo(
            waiting=services.reservation_queue.waiting,
            attempts=services.reservation_queue.attempts,
        ),
        slots=QueueInfo(waiting=services.slot_queue.waiting, attempts=services.slot_queue.attempts),
        stalled=StalledInfo(
            connections=services.stalls.connections, answers=services.stalls.answers
        ),
        readers=_readers_info(services.readers, services.read_share),
    )


def _readers_info(readers: Readers, share: int) -> ReadersInfo:
    return ReadersInfo(
        size=readers.size,
        per_connection=share,
        admitted=readers.admitted,
        most_held_by_one=readers.most_held_by_one,
        longest_queue_ahead=readers.longest_queue_ahead,
    )


def _counts_and_seq(conn: Any) -> tuple[dict[str, int], int]:
    return reads.state_counts(conn), reads.last_seq(conn)

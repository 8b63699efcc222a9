"""Reads from the team store: a psycopg pool reached through `trio.to_thread`.

Each read is one REPEATABLE READ READ ONLY transaction, so a read that
takes two statements (`events.since` reads the last seq, then the events)
sees one snapshot, as it does on SQLite. There are no inline point reads
here: every query is a network round trip, which must not block the event
loop. A store that cannot be reached answers -32004 `store_unavailable`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg
import trio
from psycopg_pool import ConnectionPool, PoolClosed

from coordd.limits import Limits
from coordd.store.postgres import connection as pg
from coordd.store.readers import Readers

T = TypeVar("T")


def _configure(conn: psycopg.Connection[Any]) -> None:
    pg.keep_json_as_text(conn)
    conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    conn.read_only = True


class PgReaderPool(Readers):
    """Read connections to the team store, replaced at once when the store comes back.

    psycopg_pool retries a lost server with a delay that doubles without a
    cap, so after a long outage it could take minutes to read again. The
    daemon learns sooner (its doorbell reconnects every half second), and
    then `renew_if_failing` swaps in a fresh pool.
    """

    def __init__(self, dsn: str, node: str, size: int = Limits.reader_pool_size) -> None:
        self._dsn = dsn
        self._node = node
        self._size = size
        super().__init__(size)
        self._pool = self._new_pool()
        self._failing = False

    def _new_pool(self) -> ConnectionPool:
        return ConnectionPool(
            self._dsn,
            min_size=self._size,
            max_size=self._size,
            open=False,
            configure=_configure,
            check=ConnectionPool.check_connection,
            kwargs={
                "application_name": f"coordd-{self._node}-reader",
                "connect_timeout": Limits.pg_connect_timeout_s,
                "options": f"-c statement_timeout={Limits.pg_statement_timeout_ms}",
            },
            # Keep trying while the store is away; a read meanwhile is -32004.
            reconnect_timeout=365 * 24 * 3600.0,
            name=f"coordd-{self._node}-readers",
        )

    def open(self) -> None:
        self._pool.open(wait=False)

    def close(self) -> None:
        self._pool.close(timeout=2.0)

    def renew_if_failing(self) -> None:
        """The store answers again: if reads were failing, start over with a fresh pool."""
        if not self._failing:
            return
        self._failing = False
        old, self._pool = self._pool, self._new_pool()
        self._pool.open(wait=False)
        # Reads still running on the old pool finish (or fail) there; it closes off-loop.
        threading.Thread(target=old.close, kwargs={"timeout": 5.0}, daemon=True).start()

    async def point_read(self, fn: Callable[..., T], *args: Any) -> T:
        return await self.run(fn, *args)

    async def _run_pooled(self, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        async with self._slot():
            return await trio.to_thread.run_sync(self._read, fn, args)

    def _read(self, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        pool = self._pool
        try:
            return self._read_on(pool, fn, args)
        except PoolClosed:
            if pool is self._pool:
                raise pg.unavailable() from None
            # The pool was renewed while this read waited on the old one: once more.
            return self._read_on(self._pool, fn, args)

    def _read_on(self, pool: ConnectionPool, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        try:
            with pool.connection(timeout=Limits.pg_connect_timeout_s) as conn:
                try:
                    return fn(pg.PgDb(conn), *args)
                finally:
                    if not conn.broken:
                        conn.rollback()
        except PoolClosed:
            raise
        except psycopg.Error as exc:
            if pg.is_disconnect(exc):
                self._failing = True
            mapped = pg.map_error(exc)
            assert mapped is not None
            raise mapped from exc

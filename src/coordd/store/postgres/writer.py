"""The team store's write transaction control (TEAM-MODE.md sections 2, 3 and 6).

Every group starts by updating the one row of `coordd_meta`: that row lock
is the team's `BEGIN IMMEDIATE` (one write group at a time across every
daemon), and the same statement returns the seq base and the group's
instant from the database's clock. So seqs are gap-free in commit order on
every node, and no daemon's own clock decides a lease. Before COMMIT the
group writes its last seq back and rings the doorbell (`pg_notify`).

A connection lost during COMMIT leaves the outcome unknown: the group's
transaction id was recorded when it began, and `pg_xact_status` after a
reconnect says which it was. The group is answered only then, never
guessed: committed, or -32004 (every coordd write is safe to retry).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Collection
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from coordd.limits import Limits
from coordd.store.failures import StoreUnavailable
from coordd.store.postgres import connection as pg
from coordd.store.postgres.schema import migrate
from coordd_client.protocol.errors import CoordError, Overloaded

log = logging.getLogger(__name__)

EVENTS_CHANNEL = "coordd_events"
#: PostgreSQL refuses a NOTIFY payload of 8000 bytes or more.
NOTIFY_PAYLOAD_LIMIT = 7900
RESERVATIONS_CHANNEL = "coordd_reservations"

_BEGIN_GROUP = (
    "UPDATE coordd_meta SET node = %s WHERE id = 1"
    " RETURNING last_seq, clock_timestamp(), pg_current_xact_id()::text"
)
#: The writer's session: bounded waits for the lock, a frozen holder cut off.
WRITER_OPTIONS = (
    f"-c lock_timeout={Limits.pg_lock_timeout_ms}"
    f" -c idle_in_transaction_session_timeout={Limits.pg_idle_in_transaction_ms}"
    f" -c statement_timeout={Limits.pg_statement_timeout_ms}"
    " -c timezone=UTC"
)


class PostgresWriteStore:
    """The writer thread's PostgreSQL connection, reconnected by itself after a failure."""

    def __init__(
        self, dsn: str, node: str, *, time_shift: Callable[[], float] | None = None
    ) -> None:
        self._dsn = dsn
        self._node = node
        #: In-process tests move the store's time with this (never the environment).
        self._time_shift = time_shift
        self._conn: psycopg.Connection[Any] | None = None
        self._db: pg.PgDb | None = None
        self._xid: str | None = None
        self._retry_at = 0.0
        self._last_failure: BaseException | None = None

    @property
    def db(self) -> pg.PgDb:
        assert self._db is not None, "not connected"
        return self._db

    def _connect(self) -> None:
        conn = pg.connect(self._dsn, f"coordd-{self._node}-writer", options=WRITER_OPTIONS)
        self._conn, self._db = conn, pg.PgDb(conn)

    def open(self) -> int:
        try:
            self._connect()
            assert self._conn is not None
            migrate(self._conn)
            (last_seq,) = pg.one(self._conn, "SELECT last_seq FROM coordd_meta WHERE id = 1")
        except psycopg.Error as exc:
            raise StoreUnavailable(
                f"cannot use the team store {pg.redact(self._dsn)}: {pg.describe(exc)}"
            ) from exc
        return int(last_seq)

    def _ensure_connected(self) -> psycopg.Connection[Any]:
        if self._conn is not None and not self._conn.closed:
            return self._conn
        if time.monotonic() < self._retry_at:
            raise pg.unavailable(self._last_failure)
        try:
            self._connect()
        except psycopg.Error as exc:
            self._retry_at = time.monotonic() + Limits.pg_reconnect_interval_s
            self._last_failure = exc
            raise pg.unavailable(exc) from exc
        log.info("reconnected to the team store")
        assert self._conn is not None
        return self._conn

    def begin(self) -> tuple[datetime, int]:
        conn = self._ensure_connected()
        try:
            conn.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
            last_seq, instant, xid = pg.one(conn, _BEGIN_GROUP, (self._node,))
        except psycopg.Error as exc:
            self._after_failure(exc)
            raise
        self._xid = xid
        now = instant.astimezone(UTC)
        if self._time_shift is not None:
            now += timedelta(seconds=self._time_shift())
        return now, int(last_seq)

    def savepoint(self) -> None:
        self._control("SAVEPOINT command")

    def release(self) -> None:
        self._control("RELEASE SAVEPOINT command")

    def _control(self, statement: str) -> None:
        assert self._conn is not None
        try:
            self._conn.execute(statement)
        except psycopg.Error as exc:
            self._after_failure(exc)
            raise

    def rollback_command(self) -> bool:
        conn = self._conn
        if conn is None or conn.broken or conn.closed:
            self._drop()
            return False
        try:
            conn.execute("ROLLBACK TO SAVEPOINT command")
            conn.execute("RELEASE SAVEPOINT command")
        except psycopg.Error as exc:
            self._after_failure(exc)
            return False
        return True

    def commit(self, last_seq: int | None, freed_projects: Collection[str]) -> None:
        conn = self._conn
        assert conn is not None
        try:
            if last_seq is not None:
                conn.execute("UPDATE coordd_meta SET last_seq = %s WHERE id = 1", (last_seq,))
                self._notify(EVENTS_CHANNEL, last_seq)
            for project in sorted(freed_projects):
                self._notify(RESERVATIONS_CHANNEL, project)
        except psycopg.Error as exc:
            self._after_failure(exc)
            raise
        try:
            conn.execute("COMMIT")
        except psycopg.Error as exc:
            if not (pg.is_disconnect(exc) or conn.broken):
                raise
            self._drop()
            self._resolve_outcome(exc)

    def _notify(self, channel: str, subject: str | int) -> None:
        """Ring the doorbell (delivered only if the group commits); the sender is named so
        that its own doorbell can ignore it."""
        payload = json.dumps([self._node, subject])
        if len(payload) >= NOTIFY_PAYLOAD_LIMIT:
            payload = json.dumps([self._node, None])  # a huge project name: "look everywhere"
        assert self._conn is not None
        self._conn.execute("SELECT pg_notify(%s, %s)", (channel, payload))

    def _resolve_outcome(self, cause: psycopg.Error) -> None:
        """Return if the lost COMMIT took effect; raise -32004 if it did not, or if unknowable."""
        xid = self._xid
        deadline = time.monotonic() + Limits.pg_outcome_timeout_s
        while time.monotonic() < deadline:
            try:
                self._connect()
                assert self._conn is not None
                (status,) = pg.one(self._conn, "SELECT pg_xact_status(%s::xid8)", (xid,))
            except psycopg.Error:
                self._drop()
                time.sleep(Limits.pg_reconnect_interval_s)
                continue
            if status == "committed":
                log.warning("the connection was lost during COMMIT; transaction %s committed", xid)
                return
            if status == "aborted":
                raise pg.unavailable(cause) from cause
            time.sleep(0.05)  # still "in progress" while its backend winds down
        raise Overloaded(
            "the team store was lost during COMMIT and could not be asked whether it took"
            f" effect within {Limits.pg_outcome_timeout_s:.0f} s; retry (every write of"
            " coordd repeats safely)",
            reason="store_unavailable",
        ) from cause

    def rollback(self) -> None:
        conn = self._conn
        if conn is None or conn.closed or conn.broken:
            self._drop()
            return
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            conn.execute("ROLLBACK")

    def _after_failure(self, exc: psycopg.Error) -> None:
        if pg.is_disconnect(exc) or (self._conn is not None and self._conn.broken):
            self._drop()

    def _drop(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except psycopg.Error:
                pass
        self._conn = self._db = None

    def map_error(self, exc: Exception) -> CoordError | None:
        return pg.map_error(exc)

    def close(self) -> None:
        self._drop()

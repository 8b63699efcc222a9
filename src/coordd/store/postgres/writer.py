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
from collections.abc import Callable, Collection, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
from psycopg import sql

from coordd.dsn import redact
from coordd.limits import Limits
from coordd.store.claims import CLAIM_PENDING_MANY
from coordd.store.failures import StoreUnavailable
from coordd.store.postgres import connection as pg
from coordd.store.postgres.schema import migrate
from coordd.store.transaction import CommittedEvent, TaskRow, Txn
from coordd.store.write_store import link_events
from coordd_wire.errors import CoordError, Overloaded
from coordd_wire.params import ClaimParams

log = logging.getLogger(__name__)

EVENTS_CHANNEL = "coordd_events"
#: PostgreSQL refuses a NOTIFY payload of 8000 bytes or more.
NOTIFY_PAYLOAD_LIMIT = 7900
RESERVATIONS_CHANNEL = "coordd_reservations"

_BEGIN_GROUP = (
    "BEGIN ISOLATION LEVEL READ COMMITTED; UPDATE coordd_meta SET node = {node} WHERE id = 1"
    " RETURNING last_seq, clock_timestamp(), pg_current_xact_id()::text"
)
#: Everything a group writes after its commands (`schema.APPEND_GROUP`), then COMMIT:
#: one plain-text message (`commit`).
_APPEND_AND_COMMIT = (
    "SELECT coordd_append_group (%s::bigint[], %s::text[], %s::text[], %s::text[],"
    " %s::text[], %s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[], %s::bigint,"
    " %s::text[], %s::text[]); COMMIT"
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

    #: Each statement is a round trip under the team's lock: a group's leading claims
    #: are claimed in one (`claim_ahead`).
    claims_ahead = True

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
        self._events: list[CommittedEvent] = []
        self._begin_group = sql.SQL(_BEGIN_GROUP).format(node=sql.Literal(node))
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
                f"cannot use the team store {redact(self._dsn)}: {pg.describe(exc)}"
            ) from exc
        return int(last_seq)

    def now(self) -> datetime:
        """The database's clock, one round trip: the node learns it before serving."""
        try:
            (instant,) = pg.one(self._ensure_connected(), "SELECT clock_timestamp()")
        except psycopg.Error as exc:
            self._after_failure(exc)
            raise StoreUnavailable(
                f"cannot read the clock of the team store {redact(self._dsn)}: {pg.describe(exc)}"
            ) from exc
        return self._shifted(instant)

    def _shifted(self, instant: datetime) -> datetime:
        now = instant.astimezone(UTC)
        if self._time_shift is not None:
            now += timedelta(seconds=self._time_shift())
        return now

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
            # BEGIN and the lock statement in one round trip: two statements in one
            # simple query, so no pipeline is left open (see `commit`).
            cursor = conn.execute(self._begin_group)
            cursor.nextset()
            row = cursor.fetchone()
            assert row is not None
            last_seq, instant, xid = row
        except psycopg.Error as exc:
            self._after_failure(exc)
            raise
        self._xid = xid
        return self._shifted(instant), int(last_seq)

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

    def claim_ahead(self, tx: Txn, claims: Sequence[ClaimParams]) -> dict[int, TaskRow]:
        """The leading claims' statement once for all of them: one round trip under the
        team's lock instead of one per claim. Each claim still decides itself
        (`claims.claim_task`), from the row won here or, lost, by its own statement."""
        rows = tx.conn.execute(
            CLAIM_PENDING_MANY,
            {
                "now": tx.now_text,
                "ids": [p.id for p in claims],
                "agents": [p.agent for p in claims],
                "untils": [tx.lease_until(p.lease_s) for p in claims],
                "keys": [p.request_key for p in claims],
                "states": ["pending"] * len(claims),
            },
        ).fetchall()
        return {row[0]: TaskRow(*row) for row in rows}

    def append_events(self, events: list[CommittedEvent]) -> None:
        # Written with the group's last seq and its doorbell, in one statement (`commit`).
        self._events = events

    def commit(self, last_seq: int | None, freed_projects: Collection[str]) -> None:
        """The group's events, `last_seq` and doorbells, and COMMIT: one message, one round
        trip, so the team's lock is released one round trip after the last command.

        One simple query ("SELECT coordd_append_group(...); COMMIT", the values written
        in as literals), not a pipeline: the server runs a simple query to its end
        whatever the client does meanwhile, whereas a backend waiting inside an unsynced
        pipeline is not "idle in transaction", so a daemon frozen between two pipelined
        messages would hold the team's lock past `idle_in_transaction_session_timeout`.
        The function's plans are kept by the server, as a prepared statement's would
        be. A failed append skips the COMMIT (the transaction is aborted; `rollback`
        ends it). A connection lost during the message leaves its fate unknown: it is
        asked of the server (`_resolve_outcome`), never assumed either way.
        """
        conn = self._conn
        assert conn is not None
        events, self._events = self._events, []
        notices = [self._notice(EVENTS_CHANNEL, last_seq)] if last_seq is not None else []
        notices += [self._notice(RESERVATIONS_CHANNEL, p) for p in sorted(freed_projects)]
        try:
            if events or notices:
                rows, newest = link_events(events)
                columns = list(zip(*rows, strict=True)) or [()] * 7
                message = psycopg.ClientCursor(conn).mogrify(
                    _APPEND_AND_COMMIT,
                    (
                        *(list(column) for column in columns),
                        list(newest),
                        list(newest.values()),
                        last_seq,
                        [channel for channel, _ in notices],
                        [payload for _, payload in notices],
                    ),
                )
                conn.execute(message.encode(), prepare=False)
            else:
                conn.execute("COMMIT")
        except psycopg.Error as exc:
            if not (pg.is_disconnect(exc) or conn.broken):
                raise
            self._drop()
            self._resolve_outcome(exc)

    def _notice(self, channel: str, subject: str | int) -> tuple[str, str]:
        """A doorbell (delivered only if the group commits), naming its sender so that
        the sender's own doorbell can ignore it."""
        payload = json.dumps([self._node, subject])
        if len(payload) >= NOTIFY_PAYLOAD_LIMIT:
            payload = json.dumps([self._node, None])  # a huge project name: "look everywhere"
        return channel, payload

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
        self._events = []
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

    def is_disk_fault(self, exc: Exception) -> bool:
        """Never here: the server syncs its own files and, failing, stops itself (its
        `data_sync_retry = off`); this daemon sees a lost connection, whose COMMIT
        outcome `_resolve_outcome` asks of the restarted server."""
        return False

    def close(self) -> None:
        self._drop()

"""How the daemon talks to PostgreSQL: opening connections, the `Db` adapter, errors.

Sync psycopg 3 only (TEAM-MODE.md section 5: its async API needs asyncio):
the writer thread owns one connection, readers use a pool reached through
`trio.to_thread`, and the doorbell listens on its own. psycopg is imported
here and in the modules beside this one only, so the SQLite daemon and the
plain CLI never load it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg.types.string import TextLoader

from coordd.limits import Limits
from coordd.store.sql import POSTGRES_LAST_SEQ, Cursor, to_postgres
from coordd_wire.errors import CoordError, InternalError, Overloaded

log = logging.getLogger(__name__)


def connect(dsn: str, application_name: str, **settings: Any) -> psycopg.Connection[Any]:
    """An autocommit connection with keepalives and a bounded connect time.

    `dsn` goes to libpq as given, never rebuilt (`coordd.dsn` says why); psycopg
    adds the settings below through libpq's own parser of it.

    libpq reads the password from the DSN, `PGPASSWORD` or `PGPASSFILE`, and
    `sslmode` from the DSN or `PGSSLMODE`, as it always does: nothing here
    touches them. TCP keepalives notice a vanished server within seconds.
    """
    conn = psycopg.connect(
        dsn,
        autocommit=True,
        connect_timeout=Limits.pg_connect_timeout_s,
        application_name=application_name,
        keepalives=1,
        keepalives_idle=5,
        keepalives_interval=2,
        keepalives_count=3,
        **settings,
    )
    keep_json_as_text(conn)
    return conn


def keep_json_as_text(conn: psycopg.Connection[Any]) -> None:
    """JSON arrives as the text PostgreSQL built: it goes on the wire as it is (`msgspec.Raw`)."""
    for name in ("json", "jsonb"):
        conn.adapters.register_loader(name, TextLoader)


def one(conn: psycopg.Connection[Any], sql: str, args: Any = ()) -> tuple[Any, ...]:
    """The single row a statement of coordd's own always returns."""
    row = conn.execute(sql, args).fetchone()
    assert row is not None, sql
    return tuple(row)


def describe(exc: BaseException) -> str:
    """One line for an error: libpq's messages span lines."""
    return " ".join(str(exc).split()) or type(exc).__name__


def map_error(exc: Exception) -> CoordError | None:
    """A PostgreSQL failure as a wire error; None if `exc` is not one of psycopg's."""
    if isinstance(exc, pg_errors.LockNotAvailable):
        return Overloaded(
            "the team store's write lock is held by another daemon for too long; retry later",
            reason="database_locked",
        )
    if isinstance(exc, pg_errors.QueryCanceled):
        return Overloaded("the team store took too long to answer; retry later", reason="timeout")
    if isinstance(exc, psycopg.OperationalError) or is_disconnect(exc):
        return unavailable(exc)  # gone, or refusing us (too many connections, starting up)
    if isinstance(exc, psycopg.Error):
        log.error("postgresql error: %s", describe(exc), exc_info=exc)
        return InternalError(f"database error: {describe(exc)}")
    return None


_SESSION_ENDED = (
    pg_errors.AdminShutdown,  # 57P01: pg_terminate_backend, a fast shutdown
    pg_errors.CrashShutdown,
    pg_errors.CannotConnectNow,
    # 25P03, idle_in_transaction_session_timeout: psycopg raises it as InternalError.
    pg_errors.IdleInTransactionSessionTimeout,
)


def is_disconnect(exc: BaseException) -> bool:
    """The connection is gone (server stopped, backend terminated, network lost).

    Not every OperationalError is: a lock timeout (55P03) or a cancelled
    statement (57014) leaves a good connection with an aborted transaction,
    which a ROLLBACK mends without reconnecting.
    """
    if isinstance(exc, _SESSION_ENDED):
        return True
    if not isinstance(exc, psycopg.OperationalError):
        return False
    return exc.sqlstate is None or exc.sqlstate.startswith("08")  # client-side, or class 08


def unavailable(exc: BaseException | None = None) -> Overloaded:
    why = f" ({describe(exc)})" if exc is not None else ""
    return Overloaded(
        f"the team store (PostgreSQL) is unavailable{why}; retry shortly: coordd reconnects"
        " by itself",
        reason="store_unavailable",
    )


class PgDb:
    """A psycopg connection seen through `coordd.store.sql.Db`: the shared SQL, translated."""

    __slots__ = ("conn",)
    last_seq_sql = POSTGRES_LAST_SEQ

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def execute(self, sql: str, parameters: Any = (), /) -> Cursor:
        return self.conn.execute(to_postgres(sql), parameters, prepare=True)

    def executemany(self, sql: str, seq_of_parameters: Iterable[Any], /) -> Cursor:
        cursor = self.conn.cursor()
        cursor.executemany(to_postgres(sql), seq_of_parameters)
        return cursor

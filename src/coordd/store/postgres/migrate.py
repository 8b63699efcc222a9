"""`coordd migrate --from coord.db --to postgresql://...`: move a board to a team store.

Everything moves, as it stands: tasks with their fences, attempts and
leases, dependencies, the whole event log (so subscribers can resume by
`after_seq` on the team store), agents and reservations. Ids and seqs are
kept, and the team store's counters continue after the highest ever used,
so no id is reused. The copy is one PostgreSQL transaction holding the
team's write lock: it lands whole or not at all. The source must not be in
use (its daemon stopped: coordd takes its lock), and the target must be
empty: merging two boards would renumber one of them.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

import psycopg

from coordd.dsn import redact
from coordd.platform.lockfile import DatabaseInUse, DatabaseLock
from coordd.store import reads
from coordd.store.connections import (
    DatabaseUnusable,
    SqliteDb,
    open_connection,
    verify_intact,
)
from coordd.store.postgres import connection as pg
from coordd.store.postgres.schema import migrate as migrate_schema
from coordd.store.schema import SCHEMA_VERSION, SchemaTooNew

#: Each table as copied: its columns, the same on both sides.
TABLES: dict[str, tuple[str, ...]] = {
    "tasks": (
        "id", "project", "kind", "title", "body", "state", "priority", "tags", "created_by",
        "created_at", "updated_at", "claimed_by", "claimed_at", "lease_expires_at", "fence",
        "attempts", "result", "idempotency_key", "posted_id", "depends_on", "open_deps",
        "assignee", "event_seq", "claim_key",
    ),
    "task_deps": ("dependency", "dependent"),
    "events": ("seq", "type", "project", "at", "data", "task_id", "prev_seq"),
    "agents": ("agent", "last_seen", "ended_at"),
    "reservations": (
        "id", "project", "agent", "pattern", "prefix", "exclusive", "reason", "task_id",
        "created_at", "expires_at", "ttl_s",
    ),
}  # fmt: skip
#: The identity columns whose counters must continue after the source's.
IDENTITIES = {"tasks": "id", "reservations": "id"}


class MigrationRefused(Exception):
    """Said in one line, exit 1: nothing was written."""


def run(source: Path, target: str) -> int:
    try:
        counts = copy_board(source, target)
    except (MigrationRefused, DatabaseInUse, DatabaseUnusable, SchemaTooNew) as exc:
        print(f"coordd migrate: {exc}", file=sys.stderr)
        return 1
    except psycopg.Error as exc:
        print(
            f"coordd migrate: the team store {redact(target)} failed: {pg.describe(exc)};"
            " nothing was written",
            file=sys.stderr,
        )
        return 1
    summary = ", ".join(f"{n} {table}" for table, n in counts.items())
    print(f"migrated {source} to {redact(target)}: {summary}")
    return 0


def copy_board(source: Path, target: str) -> dict[str, int]:
    if not source.exists():
        raise MigrationRefused(f"no database at {source}")
    lock = DatabaseLock(source)
    lock.acquire()  # no daemon may write the source meanwhile
    try:
        board = open_connection(source, query_only=True)
        try:
            verify_intact(board, source)
            (version,) = board.execute("PRAGMA user_version").fetchone()
            if version != SCHEMA_VERSION:
                raise MigrationRefused(
                    f"{source} has schema version {version}, this coordd writes {SCHEMA_VERSION}:"
                    " start coordd on it once (it upgrades the file), stop it, then migrate"
                )
            return _copy(board, target)
        finally:
            board.close()
    finally:
        lock.release()


def _copy(board: SqliteDb, target: str) -> dict[str, int]:
    with pg.connect(target, "coordd-migrate") as conn:
        migrate_schema(conn)
        with conn.transaction():
            # The team's write lock: no daemon on the target writes during the copy.
            (last_seq,) = pg.one(conn, "SELECT last_seq FROM coordd_meta WHERE id = 1 FOR UPDATE")
            occupied = [t for t in TABLES if pg.one(conn, f"SELECT count(*) FROM {t}")[0]]
            if last_seq or occupied:
                raise MigrationRefused(
                    f"the team store {redact(target)} is not empty"
                    f" ({', '.join(occupied) or 'its event log'} has data): migrate only into"
                    " a new database; merging two boards would renumber one of them"
                )
            counts = {
                table: _copy_table(board, conn, table, columns) for table, columns in TABLES.items()
            }
            for table, column in IDENTITIES.items():
                highest = _sqlite_sequence(board, table)
                if highest:
                    conn.execute(
                        "SELECT setval(pg_get_serial_sequence(%s, %s), %s)",
                        (table, column, highest),
                    )
            conn.execute(
                "UPDATE coordd_meta SET last_seq = %s, node = 'migrate' WHERE id = 1",
                (reads.last_seq(board),),
            )
            # A migrated board keeps its id: its clients' tabs and records name it.
            conn.execute(
                "UPDATE board SET board_id = %s WHERE only_row = 1", (reads.board_id(board),)
            )
        return counts


def _copy_table(
    board: sqlite3.Connection, conn: psycopg.Connection[Any], table: str, columns: tuple[str, ...]
) -> int:
    names = ", ".join(columns)
    rows = board.execute(f"SELECT {names} FROM {table} ORDER BY 1")
    exclusive = columns.index("exclusive") if "exclusive" in columns else None
    count = 0
    with conn.cursor().copy(f"COPY {table} ({names}) FROM STDIN") as copy:
        for row in rows:
            values = list(row)
            if exclusive is not None:
                values[exclusive] = bool(values[exclusive])
            copy.write_row(values)
            count += 1
    return count


def _sqlite_sequence(board: sqlite3.Connection, table: str) -> int:
    row = board.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,)).fetchone()
    return int(row[0]) if row else 0

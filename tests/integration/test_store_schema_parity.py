"""The two stores have one schema: the same tables, columns and indexes (issue 30, item 3).

Both are created for real by their own migrations (a SQLite file; a database on the
session's throwaway PostgreSQL cluster) and compared through their catalogs, so a
column or an index added to one store's migrations only fails here. Column types
differ by dialect (TEXT COLLATE "C", BIGINT, BOOLEAN); names, order, NOT NULL, primary
keys, and each index's table, columns, direction, uniqueness and partiality must not.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from coordd.store import schema
from coordd.store.postgres import schema as pg_schema
from postgres import create_database
from servers import PostgresPeer

#: Team mode's own tables (docs/TEAM-MODE.md): its version row and write lock, its nodes.
TEAM_ONLY = {"coordd_meta", "coordd_daemons"}

#: {table: [(column, not null, in the primary key)]}
Columns = dict[str, list[tuple[str, bool, bool]]]
#: {index: (table, unique, partial, ((column, descending), ...))}
Indexes = dict[str, tuple[str, bool, bool, tuple[tuple[str, bool], ...]]]


def sqlite_catalog(path: Path) -> tuple[Columns, Indexes]:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        schema.migrate(conn)
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        columns: Columns = {}
        indexes: Indexes = {}
        for table in tables:
            info = conn.execute(f"PRAGMA table_info({table})").fetchall()
            # An INTEGER PRIMARY KEY is the rowid: never null, though the pragma says 0.
            columns[table] = [(row[1], bool(row[3] or row[5]), bool(row[5])) for row in info]
            for _, name, unique, origin, partial in conn.execute(f"PRAGMA index_list({table})"):
                if origin == "pk":  # the primary key's own index: compared as columns
                    continue
                keys = conn.execute(f"PRAGMA index_xinfo({name})").fetchall()
                cols = tuple((row[2], bool(row[3])) for row in keys if row[5])
                indexes[name] = (table, bool(unique), bool(partial), cols)
        return columns, indexes
    finally:
        conn.close()


def postgres_catalog(dsn: str) -> tuple[Columns, Indexes]:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        pg_schema.migrate(conn)
        rows: list[Any] = conn.execute(
            """SELECT c.table_name, c.column_name, c.is_nullable = 'NO',
                      EXISTS (SELECT 1 FROM pg_index i
                              JOIN pg_attribute a ON a.attrelid = i.indrelid
                                                  AND a.attnum = ANY (i.indkey)
                              WHERE i.indisprimary AND i.indrelid = c.table_name::regclass
                                AND a.attname = c.column_name)
               FROM information_schema.columns c
               WHERE c.table_schema = 'public' ORDER BY c.table_name, c.ordinal_position"""
        ).fetchall()
        columns: Columns = {}
        for table, column, not_null, in_pk in rows:
            if table not in TEAM_ONLY:
                columns.setdefault(table, []).append((column, bool(not_null), bool(in_pk)))
        found: list[Any] = conn.execute(
            """SELECT ic.relname, tc.relname, i.indisunique, i.indpred IS NOT NULL,
                      array(SELECT pg_get_indexdef(i.indexrelid, k, true)
                            FROM generate_series(1, i.indnkeyatts) AS k ORDER BY k),
                      array(SELECT (i.indoption[k - 1] & 1) = 1
                            FROM generate_series(1, i.indnkeyatts) AS k ORDER BY k)
               FROM pg_index i
               JOIN pg_class ic ON ic.oid = i.indexrelid
               JOIN pg_class tc ON tc.oid = i.indrelid
               JOIN pg_namespace n ON n.oid = tc.relnamespace
               WHERE n.nspname = 'public' AND NOT i.indisprimary"""
        ).fetchall()
        indexes: Indexes = {}
        for name, table, unique, partial, keys, desc in found:
            if table not in TEAM_ONLY:
                cols = tuple(
                    (re.sub(r"\s+COLLATE.*", "", k), d) for k, d in zip(keys, desc, strict=True)
                )
                indexes[name] = (table, bool(unique), bool(partial), cols)
        return columns, indexes


def flat(columns: Columns) -> dict[str, tuple[bool, bool]]:
    """{"table.column": (not null, in the primary key)}; a table with no columns is absent."""
    return {f"{t}.{c}": (n, k) for t, cols in columns.items() for c, n, k in cols}


def differences(sqlite: dict[str, Any], postgres: dict[str, Any]) -> list[str]:
    out = [f"{name}: only in SQLite" for name in sorted(set(sqlite) - set(postgres))]
    out += [f"{name}: only in PostgreSQL" for name in sorted(set(postgres) - set(sqlite))]
    out += [
        f"{name}: SQLite {sqlite[name]} != PostgreSQL {postgres[name]}"
        for name in sorted(set(sqlite) & set(postgres))
        if sqlite[name] != postgres[name]
    ]
    return out


def test_both_stores_have_the_same_tables_columns_and_indexes(
    workdir: Path, postgres_cluster: PostgresPeer
) -> None:
    sqlite_columns, sqlite_indexes = sqlite_catalog(workdir / "schema.db")
    pg_columns, pg_indexes = postgres_catalog(create_database(postgres_cluster))
    assert {"tasks", "events", "reservations"} <= set(sqlite_columns)  # it read something
    assert "tasks_pending" in sqlite_indexes
    problems = differences(flat(sqlite_columns), flat(pg_columns))
    problems += differences(sqlite_indexes, pg_indexes)
    for table in sorted(set(sqlite_columns) & set(pg_columns)):
        shared = set(flat({table: sqlite_columns[table]})) & set(flat({table: pg_columns[table]}))
        order = [
            [c for c, *_ in cols if f"{table}.{c}" in shared]
            for cols in (sqlite_columns[table], pg_columns[table])
        ]
        if order[0] != order[1]:
            problems.append(f"{table}: columns in another order: {order[0]} != {order[1]}")
    assert not problems, "\n".join(problems)

"""Offline and online maintenance: `coordd check` and `coordd backup`."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

from coordd.store import queries
from coordd.store.connections import open_connection
from coordd.store.schema import SCHEMA_VERSION


def check(db_path: Path) -> int:
    """Integrity check, schema version and counts; exit 1 if anything is wrong.

    Safe while the daemon runs: it only reads, in WAL mode, from its own connection.
    """
    if not db_path.exists():
        print(f"coordd check: no database at {db_path}", file=sys.stderr)
        return 1
    conn = open_connection(db_path, query_only=True)
    try:
        (integrity,) = conn.execute("PRAGMA integrity_check").fetchone()
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        counts = queries.state_counts(conn)
        last = queries.last_seq(conn)
        (events,) = conn.execute("SELECT count(*) FROM events").fetchone()
    finally:
        conn.close()
    print(f"database:        {db_path}")
    print(f"integrity_check: {integrity}")
    print(f"schema version:  {version} (this coordd: {SCHEMA_VERSION})")
    print("tasks:           " + ", ".join(f"{state} {n}" for state, n in counts.items()))
    print(f"events:          {events} stored, last seq {last}")
    return 0 if integrity == "ok" and version == SCHEMA_VERSION else 1


def backup(db_path: Path, target: Path) -> int:
    """Copy the database with SQLite's online backup API.

    The backup reads one consistent snapshot while the daemon goes on
    writing (it only needs a read transaction in WAL mode).
    """
    if not db_path.exists():
        print(f"coordd backup: no database at {db_path}", file=sys.stderr)
        return 1
    if target.exists():
        print(f"coordd backup: {target} exists; refusing to overwrite it", file=sys.stderr)
        return 1
    source = open_connection(db_path, query_only=True)
    destination = sqlite3.connect(target)
    try:
        source.backup(destination)
        (integrity,) = destination.execute("PRAGMA integrity_check").fetchone()
    finally:
        destination.close()
        source.close()
    print(f"backed up {db_path} to {target} (integrity_check: {integrity})")
    return 0 if integrity == "ok" else 1

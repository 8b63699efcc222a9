"""Offline and online maintenance: `coordd check` and `coordd backup`."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

from coordd.store import reads
from coordd.store.connections import RECOVERY_ADVICE, open_connection
from coordd.store.schema import SCHEMA_VERSION


def check(db_path: Path) -> int:
    """Integrity check, schema version and counts; exit 1 if anything is wrong.

    Safe while the daemon runs: it only reads, in WAL mode, from its own connection.
    A file SQLite cannot read at all is reported in one line, never a traceback.
    """
    if not db_path.exists():
        print(f"coordd check: no database at {db_path}", file=sys.stderr)
        return 1
    try:
        conn = open_connection(db_path, query_only=True)
    except sqlite3.Error as exc:
        return _unreadable("check", db_path, exc)
    try:
        problems = [str(row[0]) for row in conn.execute("PRAGMA integrity_check(20)")]
        integrity = "ok" if problems == ["ok"] else "; ".join(problems)
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if problems != ["ok"]:
            print(f"database:        {db_path}")
            print(f"integrity_check: {integrity}")
            print("coordd check: the database is damaged; " + RECOVERY_ADVICE.format(path=db_path))
            return 1
        counts = reads.counted_states(conn)
        kept = reads.state_counts(conn) if version >= SCHEMA_VERSION else counts
        last = reads.last_seq(conn)
        (events,) = conn.execute("SELECT count(*) FROM events").fetchone()
    except sqlite3.Error as exc:
        return _unreadable("check", db_path, exc)
    finally:
        conn.close()
    print(f"database:        {db_path}")
    print(f"integrity_check: {integrity}")
    print(f"schema version:  {version} (this coordd: {SCHEMA_VERSION})")
    print("tasks:           " + ", ".join(f"{state} {n}" for state, n in counts.items()))
    print(f"events:          {events} stored, last seq {last}")
    if kept != counts:  # server.info answers from the counters: a wrong one is loud here
        kept_text = ", ".join(f"{state} {n}" for state, n in kept.items())
        print(f"coordd check: the kept task counts disagree with the tasks: {kept_text}",
              file=sys.stderr)  # fmt: skip
        return 1
    return 0 if version == SCHEMA_VERSION else 1


def _unreadable(command: str, db_path: Path, exc: sqlite3.Error) -> int:
    print(
        f"coordd {command}: cannot read {db_path}: {exc}; it is damaged or not a coordd"
        " database. Restore a copy made with `coordd backup`, or move it aside.",
        file=sys.stderr,
    )
    return 1


def backup(db_path: Path, target: Path) -> int:
    """Copy the database with SQLite's online backup API.

    The backup reads one consistent snapshot while the daemon goes on
    writing (it only needs a read transaction in WAL mode). The copy holds
    the whole board, so it is created 0600, and never through a symlink
    (not even a dangling one) or over an existing file.
    """
    if not db_path.exists():
        print(f"coordd backup: no database at {db_path}", file=sys.stderr)
        return 1
    if os.path.lexists(target):
        refusal = (
            "is a symlink; refusing to write through it"
            if target.is_symlink()
            else "exists; refusing to overwrite it"
        )
        print(f"coordd backup: {target} {refusal}", file=sys.stderr)
        return 1
    try:
        # O_EXCL|O_NOFOLLOW: no race with a file or link appearing meanwhile.
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        print(f"coordd backup: cannot create {target}: {exc.strerror}", file=sys.stderr)
        return 1
    os.close(fd)
    try:
        source = open_connection(db_path, query_only=True)
        destination = sqlite3.connect(target)
        try:
            source.backup(destination)
            (integrity,) = destination.execute("PRAGMA integrity_check").fetchone()
        finally:
            destination.close()
            source.close()
    except sqlite3.Error as exc:
        target.unlink(missing_ok=True)
        return _unreadable("backup", db_path, exc)
    print(f"backed up {db_path} to {target} (integrity_check: {integrity})")
    return 0 if integrity == "ok" else 1

"""`file.guard` matches on a reader, then decides in the writer (issue 44): what changed
in between is matched in the writer, so the verdict is the writer's own."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from coordd.clock import format_time
from coordd.pattern_verdicts import Verdicts
from coordd.store import edits, reservations, transaction
from coordd.store.connections import Durability, SqliteDb, open_writer_connection
from coordd.store.schema import migrate
from coordd_wire import params as P
from coordd_wire import params_edits as E

PROJECT = "/repo"


@pytest.fixture
def conn(workdir: Path) -> SqliteDb:
    connection = open_writer_connection(workdir / "guard.db", Durability.FULL)
    migrate(connection)
    return connection


def _write(conn: SqliteDb, fn: Callable[..., Any], *args: object) -> Any:
    conn.execute("BEGIN IMMEDIATE")
    tx = transaction.Txn(conn, datetime.now(UTC), {}, 1)
    try:
        return fn(tx, *args)
    finally:
        conn.execute("COMMIT")


def _reserve(conn: SqliteDb, agent: str, *patterns: str) -> None:
    acquire = P.AcquireParams(agent=agent, project=PROJECT, patterns=list(patterns))
    _write(conn, reservations.acquire, acquire)


def _matched(conn: SqliteDb, p: E.GuardParams) -> Verdicts:
    conn.execute("BEGIN")
    try:
        return edits.match_for_guard(conn, format_time(datetime.now(UTC)), p)
    finally:
        conn.execute("COMMIT")


def _guard(paths: list[str], agent: str = "me") -> E.GuardParams:
    return E.GuardParams(agent=agent, project=PROJECT, worktree=PROJECT, paths=paths)


def test_a_reservation_granted_after_the_readers_match_still_denies(conn: SqliteDb) -> None:
    _reserve(conn, "other", *(f"**/gen{n}/*.py" for n in range(50)))
    p = _guard(["src/a.py", "src/b.py"])
    verdicts = _matched(conn, p)
    _reserve(conn, "other", "src/*.py")  # in between: the reader never saw it
    answer = _write(conn, edits.guard, p, verdicts)
    assert isinstance(answer, dict) and not answer["allowed"]
    assert [c["reservation"]["pattern"] for c in answer["conflicts"]] == ["src/*.py"] * 2
    assert verdicts.computed == 2  # only the new pattern was matched in the writer


def test_a_reservation_released_after_the_readers_match_no_longer_denies(
    conn: SqliteDb,
) -> None:
    _reserve(conn, "other", "src/**")
    p = _guard(["src/a.py"])
    verdicts = _matched(conn, p)
    _write(conn, reservations.release, P.ReleaseReservationsParams(agent="other", project=PROJECT))
    answer = _write(conn, edits.guard, p, verdicts)
    assert isinstance(answer, dict) and answer["allowed"]
    assert [r["pattern"] for r in answer["reserved"]] == ["src/a.py"]
    assert verdicts.computed == 0


def test_an_overlap_granted_in_between_stops_the_automatic_reservation(
    conn: SqliteDb,
) -> None:
    p = _guard(["src/a.py"])
    verdicts = _matched(conn, p)
    _reserve(conn, "other", "src/a.py/x")  # overlaps without covering: no auto-reserve
    answer = _write(conn, edits.guard, p, verdicts)
    assert isinstance(answer, dict) and answer["allowed"] and answer["reserved"] == []

"""The store tier's `board`: a fresh store for each test, made from a migrated template.

On SQLite the template is one migrated database file per session, copied per
test; on PostgreSQL (`both_backends` tests, the session's cluster of
tests/conftest.py) one migrated database per session, cloned per test with
`CREATE DATABASE ... TEMPLATE`, so no test pays for the migrations.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from coordd.clock import ManualClock
from coordd.store.connections import Durability
from coordd.store.write_store import SqliteWriteStore, WriteStore
from servers import PostgresPeer
from store.board import Board, Seat, open_board

_clones = itertools.count(1)


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated, checkpointed SQLite store to copy."""
    path = tmp_path_factory.mktemp("template") / "coord.db"
    store = SqliteWriteStore(path, durability=Durability.NORMAL, clock=ManualClock())
    store.open()
    store.close()  # TRUNCATE checkpoint: the whole store is in the one file
    return path


@pytest.fixture(scope="session")
def postgres_template(postgres_cluster: PostgresPeer) -> str:
    """A migrated PostgreSQL database to clone; its name."""
    import psycopg

    from coordd.store.postgres.writer import PostgresWriteStore

    name = f"template_{os.getpid()}"
    with psycopg.connect(postgres_cluster.address, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    store = PostgresWriteStore(postgres_cluster.url(name), "template")
    store.open()
    store.close()
    return name


def _clone(request: pytest.FixtureRequest, clock: ManualClock) -> tuple[WriteStore, str]:
    import psycopg

    from coordd.store.postgres.writer import PostgresWriteStore

    cluster: PostgresPeer = request.getfixturevalue("postgres_cluster")
    template: str = request.getfixturevalue("postgres_template")
    name = f"s{os.getpid()}_{next(_clones)}"
    with psycopg.connect(cluster.address, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    return PostgresWriteStore(cluster.url(name), "test", time_shift=clock.advanced_s), name


@pytest.fixture
def board(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, clock: ManualClock
) -> Iterator[Board]:
    """A fresh store on `backend` (SQLite; PostgreSQL too where `both_backends`)."""
    store: WriteStore
    clone = None
    if backend == "sqlite":
        template: Path = request.getfixturevalue("sqlite_template")
        path = tmp_path / "coord.db"
        shutil.copyfile(template, path)
        store = SqliteWriteStore(path, durability=Durability.NORMAL, clock=clock)
    else:
        store, clone = _clone(request, clock)
    with open_board(store, clock, backend) as opened:
        yield opened
    if clone is not None:
        _drop(request, clone)


def _drop(request: pytest.FixtureRequest, name: str) -> None:
    """Drop the clone: what the cluster still holds at the end of the session it must
    write out at its shutdown checkpoint (fsync on), 30 s for a hundred clones."""
    import psycopg

    cluster: PostgresPeer = request.getfixturevalue("postgres_cluster")
    with psycopg.connect(cluster.address, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}"')


@pytest.fixture
def client(board: Board) -> Seat:
    """A client on the board with no default agent or project (as `aclient` has none)."""
    return board.seat()

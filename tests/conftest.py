from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import trio
from hypothesis import settings

from coordd.clock import ManualClock
from coordd.config import DaemonConfig
from coordd.daemon import Daemon
from coordd_client.aio import AsyncClient
from postgres import create_database, throwaway_cluster
from servers import PostgresPeer
from support import DaemonProcess, short_tmpdir

#: Hypothesis's per-example deadline (200 ms) is a timing assertion: on a busy
#: machine one slow example fails a property that holds. The suite's only time
#: limit is pytest-timeout's hang bound.
settings.register_profile("coordd", deadline=None)
settings.load_profile("coordd")


@pytest.fixture(autouse=True)
def private_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test has a home directory of its own, as every test has a database of its own.

    Daemons announce themselves, and record the user's board, under the home
    directory (`coordd_wire.rendezvous`), and clients read both
    before they start a daemon: with one home for the whole run, a test's client
    would find another test's daemon, or start another test's board.
    """
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def workdir() -> Iterator[Path]:
    path = short_tmpdir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """`both_backends` tests run once on SQLite and once on a real PostgreSQL."""
    if "backend" not in metafunc.fixturenames:
        return
    both = metafunc.definition.get_closest_marker("both_backends")
    only = metafunc.definition.get_closest_marker("sqlite_only")
    backends = ["sqlite", "postgresql"] if both and not only else ["sqlite"]
    metafunc.parametrize("backend", backends, indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresPeer]:
    """One PostgreSQL cluster for the session; each test gets its own database."""
    with throwaway_cluster() as cluster:
        yield cluster


@pytest.fixture
def store(backend: str, request: pytest.FixtureRequest) -> str | None:
    """The team store's DSN for a PostgreSQL case (a fresh database); None on SQLite."""
    if backend == "sqlite":
        return None
    cluster: PostgresPeer = request.getfixturevalue("postgres_cluster")
    return create_database(cluster)


@pytest.fixture
def daemon(workdir: Path, store: str | None) -> Iterator[DaemonProcess]:
    """A real `coordd serve` subprocess on a fresh database (SQLite, or PostgreSQL)."""
    process = DaemonProcess(workdir, store=store).start()
    yield process
    process.ensure_dead()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def inproc(workdir: Path, clock: ManualClock, store: str | None) -> AsyncIterator[Daemon]:
    """The real daemon on a real socket and store, in this process, on a clock the test moves.

    On PostgreSQL leases follow the database's clock; the test's clock moves it
    through the in-process hook `store_time_shift` (never reachable from outside).
    """
    config = DaemonConfig(
        db_path=workdir / "coord.db",
        socket_path=workdir / "s.sock",
        handle_signals=False,
        store_dsn=store,
        store_time_shift=clock.advanced_s if store is not None else None,
    )
    async with trio.open_nursery() as nursery:
        daemon = await nursery.start(Daemon(config, clock=clock).run)
        yield daemon
        daemon.request_stop()


@pytest.fixture
async def aclient(inproc: Daemon) -> AsyncIterator[AsyncClient]:
    """A trio client connected to the in-process daemon."""
    async with AsyncClient.connect(inproc.config.socket_path) as client:
        yield client

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import trio

from coordd.clock import ManualClock
from coordd.daemon import Daemon, DaemonConfig
from coordd_client.aio import AsyncClient
from support import DaemonProcess, short_tmpdir


@pytest.fixture
def workdir() -> Iterator[Path]:
    path = short_tmpdir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def daemon(workdir: Path) -> Iterator[DaemonProcess]:
    """A real `coordd serve` subprocess on a fresh database."""
    process = DaemonProcess(workdir).start()
    yield process
    process.ensure_dead()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def inproc(workdir: Path, clock: ManualClock) -> AsyncIterator[Daemon]:
    """The real daemon on a real socket and file, in this process, on a clock the test moves."""
    config = DaemonConfig(
        db_path=workdir / "coord.db", socket_path=workdir / "s.sock", handle_signals=False
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

"""Fixtures for tests that drive the store directly, without a daemon."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from coordd.clock import ManualClock
from coordd.lifecycle import Lifecycle
from coordd.store import transaction
from coordd.store.connections import Durability
from coordd.store.write_store import SqliteWriteStore
from coordd.store.writer import Writer


@pytest.fixture
async def writer(workdir: Path) -> AsyncIterator[Writer]:
    """A started writer on `workdir / "w.db"`; `writer.published` collects committed events."""
    published: list[transaction.CommittedEvent] = []
    w = Writer(
        SqliteWriteStore(workdir / "w.db", durability=Durability.FULL, clock=ManualClock()),
        on_commit=published.extend,
        lifecycle=Lifecycle(),
    )
    w.open()
    w.start()
    w.published = published  # type: ignore[attr-defined]
    yield w
    await w.stop()

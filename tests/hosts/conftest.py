"""The host tier: the real Claude Code and Codex binaries (pinned in package.json)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hosts.world import World


@pytest.fixture
def world() -> Iterator[World]:
    made = World()
    yield made
    made.close()

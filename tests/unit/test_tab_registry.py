"""The tab registry (coordd_client.tabs): keyed by the host process's pid and start time."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from coordd_client import tabs


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def test_a_record_names_the_tab_for_every_descendant(home: Path) -> None:
    parent = tabs.process(os.getppid())
    assert parent is not None
    registered = tabs.register("claude-aaaa", "claude", "s1", {"CLAUDE_PID": str(parent.pid)})
    assert registered is not None and registered.process == parent.pid
    found = tabs.find()
    assert found is not None and found.agent == "claude-aaaa"
    # The first name stays: a later session start of the same tab (/clear) keeps it.
    again = tabs.register("claude-bbbb", "claude", "s2", {"CLAUDE_PID": str(parent.pid)})
    assert again is not None and again.agent == "claude-aaaa"
    tabs.forget({"CLAUDE_PID": str(parent.pid)})
    assert tabs.find() is None


def test_a_reused_pid_is_another_tab(home: Path) -> None:
    parent = tabs.process(os.getppid())
    assert parent is not None
    directory = home / ".local" / "state" / "coordd" / "tabs"
    directory.mkdir(parents=True)
    # A record left by a process that had this pid but started at another time.
    stale = directory / f"{parent.pid}-1.json"
    stale.write_text(json.dumps({"agent": "dead-tab", "host": "claude", "session": "x"}))
    assert tabs.find() is None
    tabs.register("claude-new", "claude", "s", {"CLAUDE_PID": str(parent.pid)})
    assert not stale.exists()  # pruned when a live tab registers
    found = tabs.find()
    assert found is not None and found.agent == "claude-new"


def test_xdg_state_home_does_not_move_the_registry(home: Path) -> None:
    """Codex gives MCP servers HOME but not XDG_STATE_HOME: both must see one registry."""
    parent = tabs.process(os.getppid())
    assert parent is not None
    env = {"CLAUDE_PID": str(parent.pid), "XDG_STATE_HOME": str(home / "elsewhere")}
    tabs.register("codex-cccc", "codex", "t", env)
    found = tabs.find({})
    assert found is not None and found.agent == "codex-cccc"

"""`coord doctor` where the MCP SDK is not installed (the client alone, `pip install
./clients/python`): the boards section says the servers cannot be probed, and goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

from coordd_apps.doctor import boards
from coordd_apps.doctor.hostenv import Surface


def test_no_sdk_skips_the_mcp_servers_instead_of_failing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(boards, "mcp_sdk_missing", lambda: "the MCP SDK is not installed")
    inspector = Surface("mcp client", "the Inspector", "(default)", "/abs/coord", ["mcp"])
    environ = {"HOME": str(tmp_path), "XDG_RUNTIME_DIR": str(tmp_path), "TMPDIR": str(tmp_path)}
    findings = boards.check_boards(None, tmp_path / "s.sock", [inspector], environ)
    assert [(f.skipped, f.detail) for f in findings] == [(True, "the MCP SDK is not installed")]

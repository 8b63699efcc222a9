"""What the suite and the bench both need of `coord mcp`'s processes.

The opening `initialize` request a host sends, and how to find the shared MCP
servers (`coordd_apps.mcp_bridge.shared`) whose socket is in a directory:
`tests/system/test_mcp_relay.py` asserts on them and `bench/mcp_start.py`
stops them between rounds. Kept with the tests; the bench imports it.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


def shared_servers(directory: Path) -> list[int]:
    """Pids of shared MCP servers with their socket in `directory`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                words = (entry / "cmdline").read_bytes().split(b"\0")
                if b"coordd_apps.mcp_bridge.shared" in words and any(
                    w.startswith(os.fsencode(directory) + b"/mcp-") for w in words
                ):
                    found.append(int(entry.name))
    return found

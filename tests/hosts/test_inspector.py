"""The official MCP Inspector (2.12.0) as a third-party MCP client of `coord mcp`.

It starts servers with a reduced environment (no `XDG_RUNTIME_DIR`) and
validates every structured result, error results included, against the
tool's `outputSchema`: an error must reach its user as coord's message, not
as a schema failure that hides it.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

from coordd_client import Client
from hosts.world import INSPECTOR, World, require
from support import COORD, SHARED_TMP_SOCKET

pytestmark = SHARED_TMP_SOCKET


def inspect(world: World, *arguments: str) -> tuple[list[dict[str, Any]], str]:
    """One `mcp-inspector --cli` call: (the JSON documents it printed, its stderr)."""
    done = subprocess.run(
        [require(INSPECTOR), "--cli", COORD, "mcp", "--method", *arguments],
        cwd=world.repo,
        env=world.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    decoder, documents, text = json.JSONDecoder(), [], done.stdout.strip()
    while text:
        document, end = decoder.raw_decode(text)
        documents.append(document)
        text = text[end:].strip()
    return documents, done.stderr


def test_results_and_errors_validate_against_each_tools_schema(world: World) -> None:
    with Client(world.daemon.socket_path, agent="planner", project=str(world.repo)) as c:
        task = c.post("seen through the inspector").task
    board, _ = inspect(world, "tools/call", "--tool-name", "board")
    assert board[0]["isError"] is False, board
    assert task.title in json.dumps(board[0]["structuredContent"])  # the one board
    missing, stderr = inspect(
        world, "tools/call", "--tool-name", "get_task", "--tool-arg", "id=999"
    )
    result = missing[0]
    assert result["isError"] is True and "structuredContent" not in result
    assert result["content"][0]["text"].startswith("not_found: no task with id 999;")
    shown = json.dumps(missing) + stderr
    assert "must have required property" not in shown and "outputSchema" not in shown

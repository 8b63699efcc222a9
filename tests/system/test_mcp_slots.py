"""Issue 35's MCP tools through `coord mcp` over stdio, as a host drives them, against a
real daemon and a real repository: a slot, a port, the queue, and a landing."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path
from typing import Any

from mcp import Client as MCPClient
from mcp.client.stdio import StdioServerParameters
from mcp.types import CallToolResult

from support import COORD, DaemonProcess, coord_env

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
}  # fmt: skip


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True,
                          env={**os.environ, **GIT_ENV}, timeout=60)  # fmt: skip
    return done.stdout.strip()


def doc(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
    structured: dict[str, Any] = result.structured_content
    return structured


async def test_slot_port_queue_and_land_tools(daemon: DaemonProcess, workdir: Path) -> None:
    repo = workdir / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "start")
    git(repo, "worktree", "add", "-q", "-b", "f1", str(workdir / "f1"))
    (workdir / "f1" / "b.txt").write_text("b\n")
    git(workdir / "f1", "add", ".")
    git(workdir / "f1", "commit", "-q", "-m", "f1")
    environ = {**coord_env(daemon.socket_path), **GIT_ENV, "COORD_PROJECT": str(repo),
               "COORD_AGENT": "mcp-tab"}  # fmt: skip
    params = StdioServerParameters(command=COORD, args=["mcp"], env=environ)
    async with MCPClient(params) as c:
        lock = doc(await c.call_tool("acquire_slot", {"name": "migrations"}))["lease"]
        assert (lock["agent"], lock["capacity"], lock["fence"]) == ("mcp-tab", 1, lock["id"])
        port = doc(await c.call_tool("lease_port", {"name": "web", "low": 34000, "high": 34001}))
        assert port["lease"]["port"] == 34000
        assert doc(await c.call_tool("release_slot", {}))["released"] == 2
        assert doc(await c.call_tool("landing_queue", {}))["landings"] == []
        landed = doc(await c.call_tool("land", {"branch": "f1"}))["landing"]
        assert landed["state"] == "landed" and landed["commit"] == git(repo, "rev-parse", "main")
        assert (repo / "b.txt").read_text() == "b\n"
        assert git(repo, "status", "--porcelain") == ""
        again = await c.call_tool("land", {"branch": "no-such-branch"})
        assert again.is_error and "no local branch" in again.content[0].text  # type: ignore[union-attr]


async def test_lease_port_skips_a_port_another_program_listens_on(
    daemon: DaemonProcess, workdir: Path
) -> None:
    environ = {**coord_env(daemon.socket_path), "COORD_PROJECT": str(workdir),
               "COORD_AGENT": "mcp-tab"}  # fmt: skip
    params = StdioServerParameters(command=COORD, args=["mcp"], env=environ)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        busy = held.getsockname()[1]
        async with MCPClient(params) as c:
            answer = await c.call_tool("lease_port", {"low": busy, "high": min(busy + 9, 65535)})
    port = doc(answer)["lease"]["port"]
    assert busy < port <= busy + 9
    said = " ".join(getattr(part, "text", "") for part in answer.content)
    assert f"skipped {busy}" in said


async def test_a_land_tool_call_retried_while_the_first_lands_is_refused(
    daemon: DaemonProcess, workdir: Path
) -> None:
    """A host that timed the `land` tool out and calls it again: the first call's lander
    still runs in the bridge, so the retry is refused (not joined), and the first lands."""
    import trio

    repo = workdir / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "start")
    git(repo, "switch", "-q", "-c", "f1")
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "f1")
    git(repo, "switch", "-q", "main")
    started, hold = workdir / "started", workdir / "hold"
    os.mkfifo(started)
    os.mkfifo(hold)
    git(repo, "config", "coord.landCheck", f"echo go > {started}; cat {hold}")
    environ = {**coord_env(daemon.socket_path), **GIT_ENV, "COORD_PROJECT": str(repo),
               "COORD_AGENT": "mcp-tab"}  # fmt: skip
    params = StdioServerParameters(command=COORD, args=["mcp"], env=environ)
    first: list[CallToolResult] = []
    async with MCPClient(params) as c:

        async def land_first() -> None:
            first.append(await c.call_tool("land", {"branch": "f1"}))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(land_first)
            with trio.fail_after(120):
                async with await trio.open_file(started) as fifo:  # the check runs now
                    await fifo.read()
            again = await c.call_tool("land", {"branch": "f1"})
            assert again.is_error, again.content
            assert "is already being landed by pid" in again.content[0].text  # type: ignore[union-attr]
            async with await trio.open_file(hold, "w") as fifo:
                await fifo.write("go\n")
    (result,) = first
    assert doc(result)["landing"]["state"] == "landed"
    assert (repo / "b.txt").read_text() == "b\n"

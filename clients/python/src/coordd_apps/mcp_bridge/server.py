"""Build the MCP server, and run it for one tab on this process's stdio under trio.

The server is built once per process: the shared server (`shared.py`) serves
every relay's session with one, and `coord mcp` in-process (the fallback, or
`$COORD_MCP_INPROCESS=1`) serves its own tab with one. stdout carries nothing
but the protocol: logging goes to stderr.
"""

from __future__ import annotations

import logging
import os
import sys

import trio
from mcp.server.mcpserver import MCPServer

from coordd_apps.mcp_bridge import session
from coordd_apps.mcp_bridge.bridge import Bridge
from coordd_apps.mcp_bridge.strict import CheckArguments
from coordd_apps.mcp_bridge.tools import register

#: What the host puts ahead of the tool list: the workflow, in at most 15 lines.
INSTRUCTIONS = """\
coordd is the shared task board for the agents working on this repository.
1. Call board at the start of a turn: your claims, work assigned to you, ready work.
2. Before working on a task, own it: claim_next, or claim_task with its id. won false
   means another agent has it: pick something else. Never work on a task you have not claimed.
3. Before editing files, reserve_paths (e.g. ["src/auth/**"], task_id = your task);
   check_paths tells you whether another agent reserved what you are about to edit.
4. On long work call heartbeat every few minutes, or your lease lapses and others may take it.
5. When done: complete_task with the fence from your claim, and then_post an ack
   ({"title": "fixed ..."}: kind ack, posted done, so nobody claims it) so others learn of it.
   Stuck: release_task (optionally to a named assignee) or fail_task.
6. Found a bug or follow-up? post_task it instead of doing it unasked.
7. Nothing to do: wait_for_task (ready true) instead of polling; call it again with the
   seq it returns.
"""


def build_server(version: str) -> MCPServer:
    server = MCPServer(
        "coordd",
        instructions=INSTRUCTIONS,
        version=version,
        log_level="WARNING",
    )
    register(server, Bridge())
    server.middleware.append(CheckArguments(server))
    return server


def run(tab: session.Tab, *, version: str) -> None:
    """Serve `tab` on this process's stdin and stdout until stdin ends."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    trio.run(_serve_stdio, tab, version)


async def _serve_stdio(tab: session.Tab, version: str) -> None:
    # As the SDK's stdio_server does: the wire moves to private descriptors, fd 0
    # reads the null device and fd 1 writes to stderr, so a stray print or a child
    # that reads stdin cannot break the protocol.
    wire_in, wire_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    os.close(devnull)
    stream = trio.StapledStream(trio.lowlevel.FdStream(wire_out), trio.lowlevel.FdStream(wire_in))
    await session.serve(build_server(version), stream, tab)

"""Build the MCP server and run it on stdio under trio.

stdout carries nothing but the protocol: logging goes to stderr.
"""

from __future__ import annotations

import logging
import sys

import trio
from mcp.server.mcpserver import MCPServer

from coordd_client.discovery import SocketRoute
from coordd_client.mcp_bridge.bridge import Bridge
from coordd_client.mcp_bridge.link import DaemonLink
from coordd_client.mcp_bridge.strict import CheckArguments
from coordd_client.mcp_bridge.tools import register

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
   ({"kind": "ack", "state": "done", "title": "fixed ..."}) so others learn of it.
   Stuck: release_task (optionally to a named assignee) or fail_task.
6. Found a bug or follow-up? post_task it instead of doing it unasked.
7. Nothing to do: wait_for_task (ready true) instead of polling; call it again with the
   seq it returns.
"""


def build_server(bridge: Bridge, version: str) -> MCPServer:
    server = MCPServer(
        "coordd",
        instructions=INSTRUCTIONS,
        version=version,
        log_level="WARNING",
    )
    register(server, bridge)
    server.middleware.append(CheckArguments(server))
    return server


def run(
    route: SocketRoute,
    *,
    autostart: bool,
    version: str,
    host: str | None = None,
    project: str | None = None,
) -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    trio.run(_serve, route, autostart, version, host, project)


async def _serve(
    route: SocketRoute, autostart: bool, version: str, host: str | None, project: str | None
) -> None:
    async with trio.open_nursery() as nursery:
        link = DaemonLink(nursery, route, autostart=autostart)
        server = build_server(Bridge(link, host=host, project=project), version)
        try:
            await server.run_stdio_async()
        finally:
            await link.aclose()
            nursery.cancel_scope.cancel()

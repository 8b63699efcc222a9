"""`coord mcp`: serve the board as MCP tools on stdio (the `mcp` extra)."""

from __future__ import annotations

import os
import sys

from coordd_client.cli.context import EXIT_ERROR, EXIT_OK, Context
from coordd_client.cli.registry import arg, command, package_version

#: What to install when the SDK is missing, in both of the ways coordd is installed.
INSTALL_HINT = (
    "coord mcp needs the MCP SDK: pip install 'coordd-client[mcp]'"
    " (or, in a coordd checkout, pip install -e '.[mcp]')"
)


@command(
    "mcp",
    "serve the board as MCP tools on stdio, for Claude Code, Codex and Cursor",
    "coord mcp   # registered with: claude mcp add -s user coord -- /abs/path/coord mcp",
    arg(
        "--host",
        choices=("claude", "codex", "cursor"),
        help="the host that starts it (cursor: one agent per window's folder)",
    ),
)
def mcp(ctx: Context) -> int:
    try:
        from coordd_client.mcp_bridge.server import run  # the SDK: imported only here
    except ImportError as exc:
        sys.stderr.write(f"coord: {INSTALL_HINT} ({exc})\n")
        return EXIT_ERROR

    if getattr(ctx.args, "agent", None):  # --agent wins, as everywhere (setup pins Cursor's)
        os.environ["COORD_AGENT"] = ctx.args.agent
    run(
        ctx.route,
        autostart=ctx.autostart,
        version=package_version(),
        host=ctx.args.host,
        project=getattr(ctx.args, "project", None),
    )
    return EXIT_OK

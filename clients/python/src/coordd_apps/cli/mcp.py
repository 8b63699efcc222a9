"""`coord mcp`: serve the board as MCP tools on stdio (the `mcp` extra), in this process.

A tab's `coord mcp` is normally the relay (`coordd_apps.entry` sends it to
`coordd_apps.mcp_relay` before this module loads); this command is what
the relay falls back to, and what `$COORD_MCP_INPROCESS=1` asks for.
"""

from __future__ import annotations

import os
import sys

from coordd_apps.cli.context import EXIT_ERROR, EXIT_OK, Context
from coordd_apps.cli.registry import arg, command, package_version

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
        from coordd_apps.mcp_bridge.server import run  # the SDK: imported only here
    except ImportError as exc:
        sys.stderr.write(f"coord: {INSTALL_HINT} ({exc})\n")
        return EXIT_ERROR

    from coordd_apps.mcp_bridge.session import Tab

    env = dict(os.environ)
    if getattr(ctx.args, "agent", None):  # --agent wins, as everywhere (setup pins Cursor's)
        env["COORD_AGENT"] = ctx.args.agent
    tab = Tab(
        env=env,
        cwd=None,
        process=None,
        host=ctx.args.host,
        project=getattr(ctx.args, "project", None),
        route=ctx.route,
        autostart=ctx.autostart,
    )
    run(tab, version=package_version())
    return EXIT_OK

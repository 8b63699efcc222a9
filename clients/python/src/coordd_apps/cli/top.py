"""`coord top`: the live board for the human (the `tui` extra)."""

from __future__ import annotations

import sys

from coordd_apps.cli.context import EXIT_ERROR, EXIT_OK, Context
from coordd_apps.cli.registry import arg, command

INSTALL_HINT = (
    "coord top needs Textual: pip install 'coordd-client[tui]'"
    " (or, in a coordd checkout, pip install -e '.[tui]')"
)


@command(
    "top",
    "the live board for the human: tasks, agents, reservations, events; act as human-<user>",
    "coord top --all-projects",
    arg("--all-projects", action="store_true", help="every project, not this one"),
)
def top(ctx: Context) -> int:
    try:
        from coordd_apps.tui.app import TopApp  # Textual: imported only here
    except ImportError as exc:
        sys.stderr.write(f"coord: {INSTALL_HINT} ({exc})\n")
        return EXIT_ERROR
    project = None if ctx.args.all_projects else ctx.project
    agent = getattr(ctx.args, "agent", None)
    TopApp(ctx.socket, project, agent=agent).run()
    return EXIT_OK

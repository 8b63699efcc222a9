"""`coord web`: the human's board in the browser (the `web` extra)."""

from __future__ import annotations

import os
import sys

from coordd_apps.cli.context import EXIT_ERROR, EXIT_OK, Context
from coordd_apps.cli.registry import arg, command

#: The board shows at most this many tasks, the newest: 10,000 rows made a 2.9 MB page
#: that took seconds to paint, and a human narrows the filter instead of scrolling.
DEFAULT_ROWS = 500

INSTALL_HINT = (
    "coord web needs Starlette and hypercorn: pip install 'coordd-client[web]'"
    " (or, in a coordd checkout, pip install -e '.[web]')"
)


@command(
    "web",
    "the board in the browser on 127.0.0.1: live, with approvals; act as human-<user>",
    "coord web --open   (or --port 8765; --webhook URL --notify-on gate,task.failed)",
    arg("--port", type=int, default=0, help="TCP port on 127.0.0.1 (default: a free one)"),
    arg(
        "--open",
        action="store_true",
        dest="open_browser",
        help="open the page in a browser (a 0600 file, a one-time code: no secret in argv)",
    ),
    arg("--all-projects", action="store_true", help="every project, not this one"),
    arg(
        "--rows",
        type=int,
        default=DEFAULT_ROWS,
        help=f"at most this many tasks on the board, the newest (default {DEFAULT_ROWS})",
    ),
    arg(
        "--webhook",
        metavar="URL",
        action="append",
        help="POST chosen events here, signed ($COORD_WEBHOOK_SECRET); repeat for more",
    ),
    arg(
        "--notify-on",
        metavar="KINDS",
        default="gate,task.failed",
        help="comma-separated: gate and/or event types (default gate,task.failed)",
    ),
)
def web(ctx: Context) -> int:
    try:
        from coordd_apps.web import serve  # Starlette, hypercorn: imported only here
        from coordd_apps.web.acts import Site
        from coordd_apps.web.notify import Webhook
    except ImportError as exc:
        sys.stderr.write(f"coord: {INSTALL_HINT} ({exc})\n")
        return EXIT_ERROR
    from coordd_client.human import human_agent

    args = ctx.args
    if not 0 <= args.port <= 65535:
        sys.stderr.write(f"coord: web: --port must be 0..65535, not {args.port}\n")
        return EXIT_ERROR
    if not 1 <= args.rows <= 100_000:
        sys.stderr.write(f"coord: web: --rows must be 1..100000, not {args.rows}\n")
        return EXIT_ERROR
    kinds = [k.strip() for k in args.notify_on.split(",") if k.strip()]
    secret = os.environ.get("COORD_WEBHOOK_SECRET", "")
    try:
        webhooks = tuple(Webhook.of(url, secret, kinds) for url in args.webhook or ())
    except ValueError as exc:
        sys.stderr.write(f"coord: web: {exc}\n")
        return EXIT_ERROR
    with ctx.client() as client:  # starts the daemon when none answers, as every command
        client.ping()
    project = None if args.all_projects else ctx.project
    agent = getattr(args, "agent", None) or human_agent()
    site = Site(ctx.socket, project, agent, rows=args.rows)
    serve.main(site, args.port, args.open_browser, webhooks)
    return EXIT_OK

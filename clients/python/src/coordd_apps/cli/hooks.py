"""`coord hook EVENT` as an argparse command: `coord hook --help`, and any spelling the
fast path (`hooks.entry`) leaves to argparse. What each event does is `hooks.run`."""

from __future__ import annotations

from coordd_apps.cli.context import Context
from coordd_apps.cli.registry import arg, command
from coordd_apps.hooks.payload import HOSTS
from coordd_apps.hooks.run import DEFAULT_WAKE_S, EVENTS, Invocation, run


@command(
    "hook",
    "run a host hook (stdin: the host's JSON); `coord setup` registers these",
    "coord hook pre-edit --host claude < payload.json",
    arg("event", choices=EVENTS),
    arg("--host", choices=HOSTS, help="the host running it (guessed from stdin if omitted)"),
    arg("--max-wait", type=float, default=DEFAULT_WAKE_S, help="wake: seconds before exit 0"),
)
def hook(ctx: Context) -> int:
    return run(
        Invocation(
            event=ctx.args.event,
            host=ctx.args.host,
            max_wait_s=ctx.args.max_wait,
            agent=getattr(ctx.args, "agent", None),
            project=getattr(ctx.args, "project", None),
            route=ctx.route,
            no_start=not ctx.autostart,
        )
    )

"""Shared resources (docs/PROTOCOL-1.2.md section 13): `coord slot acquire|release|list
NAME` and `coord port [NAME]`; `coord land` is `cli/landing.py`.
A slot or port lease lives while you keep calling (`coord heartbeat`, or any
command that acts as you): it lasts `--ttl` seconds after your last call.
"""

from __future__ import annotations

import sys

from coordd_apps.cli.arguments import positive_float, task_id
from coordd_apps.cli.context import EXIT_ERROR, EXIT_LOST, EXIT_OK, Context, emit_error
from coordd_apps.cli.plain import plain_message
from coordd_apps.cli.registry import arg, command
from coordd_apps.ports import PortRequest, lease_free_port
from coordd_apps.wording import render_slots
from coordd_apps.wording.advice import plural
from coordd_wire.errors import Conflict
from coordd_wire.wire_slots import SlotList


@command(
    "slot",
    "a named lock or semaphore in this project: acquire (exit 3 if full), release, list",
    "coord slot acquire test-db --capacity 2 --wait 60",
    arg("action", choices=("acquire", "release", "list"), help="what to do"),
    arg("name", nargs="?", help="the slot's name, e.g. migrations or test-db"),
    arg("--capacity", type=int, help="how many may hold it at once (default 1: a lock)"),
    arg("--ttl", type=positive_float, help="seconds it lasts after your last call (600)"),
    arg("--task", type=task_id, help="end it when this task (which you hold) leaves claimed"),
    arg("--wait", type=float, default=None, metavar="S", help="wait up to S s for a unit"),
)
def slot(ctx: Context) -> int:
    args = ctx.args
    with ctx.client() as client:
        if args.action == "list":
            found = client.slots(project=ctx.project, name=args.name)
            return _show(ctx, found)
        if args.action == "release":
            names = [args.name] if args.name else None
            released = client.release_slots(names, agent=ctx.agent, project=ctx.project)
            ctx.emit(released, f"released {plural(released.released, 'lease')}")
            return EXIT_OK
        if not args.name:
            sys.stderr.write("coord: slot acquire needs a NAME\n")
            return EXIT_ERROR
        try:
            result = client.acquire_slot(
                args.name, agent=ctx.agent, project=ctx.project, capacity=args.capacity,
                ttl_s=args.ttl, task_id=args.task, wait_s=args.wait,
            )  # fmt: skip
        except Conflict as exc:
            emit_error(ctx.json, exc.code, plain_message(exc), exc.data)
            return EXIT_LOST
    ctx.emit(result, f"acquired {render_slots.lease_line(result.lease)}")
    return EXIT_OK


@command(
    "port",
    "lease a port no other lease or program holds (the same one again for the same name)",
    "coord port dev-server --range 3000-3999",
    arg("name", nargs="?", help="what it is for (default: port)"),
    arg("--range", dest="span", metavar="LOW-HIGH", help="ports to pick from (20000-29999)"),
    arg("--ttl", type=positive_float, help="seconds it lasts after your last call (600)"),
    arg("--task", type=task_id, help="end it when this task (which you hold) leaves claimed"),
    arg("--release", action="store_true", help="give the named port lease back"),
)
def port(ctx: Context) -> int:
    args = ctx.args
    name = args.name or "port"
    low = high = None
    if args.span:
        try:
            low, high = (int(x) for x in args.span.split("-", 1))
        except ValueError:
            sys.stderr.write(f"coord: --range {args.span!r} is not LOW-HIGH\n")
            return EXIT_ERROR
    with ctx.client() as client:
        if args.release:
            released = client.release_slots([name], agent=ctx.agent, project=ctx.project)
            ctx.emit(released, f"released {plural(released.released, 'lease')}")
            return EXIT_OK
        want = PortRequest(name, ctx.agent, ctx.project, low, high, args.ttl, args.task)
        try:
            leased = lease_free_port(client, want)
        except Conflict as exc:
            emit_error(ctx.json, exc.code, plain_message(exc), exc.data)
            return EXIT_LOST
    if leased.skipped:
        sys.stderr.write(f"coord: port: {leased.note()}\n")
    ctx.emit(leased.result, str(leased.result.lease.port))
    return EXIT_OK


def _show(ctx: Context, found: SlotList) -> int:
    lines = [render_slots.lease_line(lease) for lease in found.leases]
    ctx.emit(found, "\n".join(lines) if lines else "no live slot or port leases here")
    return EXIT_OK

"""Reservations (PROTOCOL.md section 10): keep other agents off the files you edit.

Patterns are relative to the project root, whatever the current directory
(an absolute path given as a pattern is made relative to its worktree's top);
paths given to `check` are files, so relative ones are taken from the
current directory, as a shell user means them, and each is asked about
relative to the top of the worktree it is in (`coordd_client.worktree`).
"""

from __future__ import annotations

import os
import sys

from coordd_apps.cli.arguments import positive_float, task_id
from coordd_apps.cli.context import EXIT_LOST, EXIT_OK, Context, emit_error
from coordd_apps.cli.plain import plain_message
from coordd_apps.cli.registry import arg, command
from coordd_apps.wording import render
from coordd_apps.wording.advice import plural
from coordd_client.text import clean
from coordd_client.worktree import board_path
from coordd_wire.errors import Reserved


@command(
    "reserve",
    "reserve paths (gitignore patterns from the project root), all or nothing; exit 3 if held",
    "coord reserve 'src/auth/**' --task 42 --reason 'login refactor'",
    arg("patterns", nargs="+", metavar="PATTERN", help="e.g. src/auth/** or README.md"),
    arg("--shared", action="store_true", help="a shared reservation: others may share it"),
    arg("--ttl", type=positive_float, help="seconds it lasts unless renewed (default 3600)"),
    arg("--task", type=task_id, help="end it when this task (which you hold) leaves claimed"),
    arg("--reason", help="why, shown to agents it keeps off"),
    arg("--wait", type=float, default=None, metavar="S", help="wait up to S s for them to free"),
)
def reserve(ctx: Context) -> int:
    args = ctx.args
    try:
        with ctx.client() as client:
            result = client.reserve(
                [board_path(p) if os.path.isabs(p) else p for p in args.patterns],
                agent=ctx.agent,
                project=ctx.project,
                exclusive=not args.shared,
                ttl_s=args.ttl,
                reason=args.reason,
                task_id=args.task,
                wait_s=args.wait,
            )
    except Reserved as exc:
        if ctx.json:
            emit_error(True, exc.code, exc.message, exc.data)
            return EXIT_LOST
        lines = [f"coord: {clean(plain_message(exc))} (nothing was reserved)"]
        lines += [
            f"  {clean(c.pattern)} is in the way of {render.reservation_line(c.reservation)}"
            for c in exc.conflicts
        ]
        sys.stderr.write("\n".join(lines) + "\n")
        return EXIT_LOST
    held = "\n".join(f"reserved {render.reservation_line(r)}" for r in result.reservations)
    ctx.emit(result, held)
    return EXIT_OK


@command(
    "unreserve",
    "release your reservations here (or, asking first, a gone tab's with --of NAME)",
    "coord unreserve 'src/auth/**'",
    arg("patterns", nargs="*", metavar="PATTERN", help="none: every one of yours here"),
    arg("--id", type=int, action="append", dest="ids", help="a reservation id (repeatable)"),
    arg("--of", metavar="NAME", help="another agent's (a tab that has gone): shown, then asked"),
    arg("--yes", action="store_true", help="with --of: free them without asking (scripts)"),
)
def unreserve(ctx: Context) -> int:
    args = ctx.args
    if args.of is not None:
        from coordd_apps.cli.free import free

        return free(ctx, args.of, args.patterns, args.ids)
    with ctx.client() as client:
        result = client.unreserve(
            args.patterns or None, ids=args.ids, agent=ctx.agent, project=ctx.project
        )
    ctx.emit(result, f"released {plural(result.released, 'reservation')}")
    return EXIT_OK


@command(
    "check",
    "who else has reserved these paths; exit 3 if another agent holds one exclusively",
    "coord check src/auth/login.py",
    arg("paths", nargs="+", metavar="PATH", help="files or directories (relative to here)"),
)
def check(ctx: Context) -> int:
    project = ctx.project
    given = {_as_project_path(p, project): p for p in ctx.args.paths}
    with ctx.client() as client:
        result = client.check_paths(list(given), project=project, agent=ctx.agent)
    exclusive = [c for c in result.conflicts if c.reservation.exclusive]
    lines = [
        f"{clean(given.get(c.path, c.path))}: {render.reservation_line(c.reservation)}"
        for c in result.conflicts
    ]
    ctx.emit(result, "\n".join(lines) if lines else "free: nobody else has reserved these")
    return EXIT_LOST if exclusive else EXIT_OK


def _as_project_path(path: str, project: str) -> str:
    """Relative to its worktree's top (any worktree of the project's repository) when the
    project is a directory, else as given."""
    if not os.path.isabs(project):
        return path
    return board_path(path)


@command(
    "reservations",
    "the live reservations in this project (or every project)",
    "coord reservations --all-projects",
    arg("--all-projects", action="store_true", help="every project, with a project column"),
    arg("--mine", action="store_true", help="only yours"),
)
def reservations(ctx: Context) -> int:
    args = ctx.args
    project = None if args.all_projects else ctx.project
    agent = ctx.agent if args.mine else None
    with ctx.client() as client:
        result = client.reservations(project=project, agent=agent)
    table = render.reservation_table(result.reservations, with_project=args.all_projects)
    ctx.emit(result, table)
    return EXIT_OK

"""The landing queue (docs/PROTOCOL-1.2.md section 14): `coord land`, `coord land --queue`
and `coord land --recover`. The lander itself is the `landing` package, which the MCP
`land` tool runs too."""

from __future__ import annotations

import sys
from pathlib import Path

from coordd_apps.cli.arguments import positive_float, task_id
from coordd_apps.cli.context import EXIT_ERROR, EXIT_LOST, EXIT_OK, Context, emit_error
from coordd_apps.cli.registry import arg, command
from coordd_apps.landing import checkout, git, journal, recorded
from coordd_apps.landing.calls import DaemonGone
from coordd_apps.landing.lander import land
from coordd_apps.landing.plan import (
    AlreadyLanding,
    LandingInterrupted,
    LandingRefused,
    Plan,
)
from coordd_apps.wording import render_slots


@command(
    "land",
    "land a branch through the project's queue: rebase, check, fast-forward; exit 3 if not",
    "coord land feature-x --onto main --task 42",
    arg("branch", nargs="?", help="the branch to land (default: the current one)"),
    arg("--onto", default="main", help="the target branch (default main)"),
    arg("--task", type=task_id, help="complete this task (which you hold) once it lands"),
    arg("--check", help="the check to run (default: git config coord.landCheck)"),
    arg("--merge", action="store_true", default=None, help="a merge commit, not a rebase"),
    arg("--wait", type=float, default=None, metavar="S", help="wait up to S s for its turn"),
    arg("--ttl", type=positive_float, help="seconds its lease lasts between heartbeats (600)"),
    arg("--ignore-reservations", action="store_true", help="land over others' reservations"),
    arg("--queue", action="store_true", help="show the queue instead of landing"),
    arg(
        "--recover",
        action="store_true",
        help="only finish what an interrupted `coord land` left half-moved here, and record"
        " it with the daemon if one answers",
    ),
)
def land_branch(ctx: Context) -> int:
    args = ctx.args
    if args.recover:
        return _recover(ctx)
    with ctx.client() as client:
        client.agent, client.project = ctx.agent, ctx.project
        if args.queue:
            queue = client.landings(project=ctx.project, onto=args.onto)
            lines = [render_slots.landing_line(x) for x in queue.landings]
            ctx.emit(queue, "\n".join(lines) if lines else f"nobody is landing onto {args.onto}")
            return EXIT_OK
        repo = Path.cwd()
        say = (lambda line: None) if ctx.json else (lambda line: print(line, flush=True))
        try:
            branch = args.branch or git.current_branch(repo)
            plan = Plan(
                branch=branch, onto=args.onto, task_id=args.task, check=args.check,
                merge=args.merge, wait_s=args.wait, ttl_s=args.ttl,
                ignore_reservations=args.ignore_reservations,
            )  # fmt: skip
            outcome = land(client, repo, plan, say)
        except (git.GitFailed, DaemonGone) as exc:
            sys.stderr.write(f"coord: {exc}\n")
            return EXIT_ERROR
        except AlreadyLanding as exc:
            emit_error(ctx.json, 0, str(exc), {"landing": exc.landing.id, "pid": exc.pid})
            return EXIT_LOST
        except LandingInterrupted as exc:
            emit_error(ctx.json, 0, str(exc), {"signal": exc.signum})
            return 128 + exc.signum
        except LandingRefused as exc:
            if ctx.json:
                emit_error(True, 0, str(exc), {"landing": exc.outcome.landing.id})
            else:
                sys.stderr.write(f"coord: {exc}\n")
            return EXIT_LOST
    if ctx.json:
        ctx.emit(outcome.landing, "")
    return EXIT_OK


def _recover(ctx: Context) -> int:
    """`coord land --recover`: finish every interrupted move of this repository's targets
    (`landing/checkout.py`), waiting for one whose lander's git command still runs. A
    move whose target did move is then recorded with the daemon, if one answers, as its
    agent's landing, and its task completed (`landing/recorded.py`)."""
    lines: list[str] = []

    def landed(entry: journal.Journal) -> None:
        recorded.record_landed(ctx.socket, entry, lines.append)

    try:
        found = checkout.recover(
            Path.cwd(), None, wait_s=checkout.LOCK_WAIT_S, say=lines.append, landed=landed
        )
    except git.GitFailed as exc:
        emit_error(ctx.json, 0, str(exc), {"said": lines})
        return EXIT_ERROR
    text = "\n".join(line.strip() for line in lines) or "no interrupted landing to finish"
    ctx.emit({"recovered": found, "said": lines}, text)
    return EXIT_OK

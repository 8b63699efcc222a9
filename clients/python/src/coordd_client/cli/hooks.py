"""`coord hook EVENT`: what the hosts (and git) run; `coord setup` registers them.

A hook never bricks an agent: any failure of its own is reported on stderr
and the host proceeds (exit 0), except where blocking is the point.
"""

from __future__ import annotations

import os
import subprocess
import sys

from coordd_client.cli.context import EXIT_OK, Context
from coordd_client.cli.registry import arg, command
from coordd_client.hooks import guard, respond, session, wake
from coordd_client.hooks.payload import HOSTS, HookInput, read
from coordd_client.protocol.errors import CoordError

EVENTS = ("session-start", "pre-edit", "wake", "session-end", "pre-commit")
#: `COORD_ALLOW_RESERVED=1` lets one commit of reserved files through.
ALLOW_RESERVED_ENV = "COORD_ALLOW_RESERVED"
#: The wake hook exits 0 after this long (its host's timeout must be longer).
DEFAULT_WAKE_S = 3300.0


@command(
    "hook",
    "run a host hook (stdin: the host's JSON); `coord setup` registers these",
    "coord hook pre-edit --host claude < payload.json",
    arg("event", choices=EVENTS),
    arg("--host", choices=HOSTS, help="the host running it (guessed from stdin if omitted)"),
    arg("--max-wait", type=float, default=DEFAULT_WAKE_S, help="wake: seconds before exit 0"),
)
def hook(ctx: Context) -> int:
    event = ctx.args.event
    if event == "pre-commit":
        return _pre_commit(ctx)
    given = read(
        sys.stdin.read(),
        ctx.args.host,
        agent=getattr(ctx.args, "agent", None),
        project=getattr(ctx.args, "project", None),
    )
    try:
        if event == "session-start":
            session.register_tab(given)
            text = session.session_start_context(
                ctx.socket,
                given.agent.value,
                given.project.value,
                autostart=ctx.autostart,
                host=given.host,
            )
            return respond.context(given.host, text)
        if event == "pre-edit":
            return _pre_edit(ctx, given)
        if event == "wake":
            return _wake(ctx, given)
        return _session_end(ctx, given)
    except CoordError as exc:
        sys.stderr.write(f"coord hook {event}: {exc.message} (the session goes on)\n")
    return EXIT_OK


def _pre_edit(ctx: Context, given: HookInput) -> int:
    verdict = guard.check_paths(
        ctx.socket,
        given.paths,
        agent=given.agent.value,
        project=given.project.value,
        cwd=given.cwd,
    )
    if verdict.allowed:
        return respond.allow(given.host, verdict.reason if verdict.unreachable else "")
    return respond.deny(given.host, f"coord: {verdict.reason}")


def _session_end(ctx: Context, given: HookInput) -> int:
    if not session.tab_ends(given):
        return EXIT_OK  # `/clear`: the same tab goes on, under the same name
    ended = session.end_session(ctx.socket, given.agent.value, given.project.value)
    sys.stderr.write(
        f"coord: {given.agent.value} released {ended.claims} claim(s) and"
        f" {ended.reservations} reservation(s), and unassigned {ended.unassigned}"
        " pending task(s)\n"
    )
    return EXIT_OK


def _wake(ctx: Context, given: HookInput) -> int:
    unattended = wake.unattended()
    if unattended is not None:
        sys.stderr.write(f"coord hook wake: {unattended}; not waiting\n")
        return EXIT_OK
    try:
        message = wake.wait_for_assignment(
            ctx.socket, given.agent.value, given.project.value, ctx.args.max_wait
        )
    except CoordError as exc:
        sys.stderr.write(f"coord hook wake: {exc.message}; not waiting\n")
        return EXIT_OK
    if message is None:
        return EXIT_OK
    sys.stderr.write(message + "\n")  # shown to the model as it wakes
    return respond.BLOCK


def _pre_commit(ctx: Context) -> int:
    """git's pre-commit: refuse staged files another agent holds exclusively.

    git runs it at the top of the worktree being committed, with `$GIT_DIR`
    naming that worktree's repository (in a linked worktree) and
    `$GIT_INDEX_FILE` the index the commit is made of (a temporary one for
    `commit -a` and `commit PATHS`). The paths come from that index, relative
    to that top: exactly how the board names them, in every worktree. A
    rename is its old and its new name (`--no-renames`): both files change.
    """
    staged = subprocess.run(
        ["git", "diff", "--cached", "--name-only", "--no-renames", "-z"],
        capture_output=True,
        encoding="utf-8",
        errors="replace",
        check=False,
    )
    if staged.returncode != 0:
        sys.stderr.write(
            f"coord pre-commit: git diff --cached failed ({staged.stderr.strip()}); allowed\n"
        )
        return EXIT_OK
    paths = {p: p for p in staged.stdout.split("\0") if p}
    agent, project = ctx.agent, ctx.project  # --agent and --project win, as everywhere
    verdict = guard.check_board_paths(ctx.socket, paths, agent=agent, project=project)
    if verdict.allowed:
        if verdict.unreachable:
            sys.stderr.write(f"coord pre-commit: {verdict.reason}\n")
        return EXIT_OK
    if os.environ.get(ALLOW_RESERVED_ENV) == "1":
        sys.stderr.write(f"coord pre-commit: {ALLOW_RESERVED_ENV}=1, committing anyway: "
                         f"{verdict.reason}\n")  # fmt: skip
        return EXIT_OK
    sys.stderr.write(
        f"coord pre-commit: refused, you ({agent}) are committing files another agent"
        f" reserved: {verdict.reason}\n(override once with {ALLOW_RESERVED_ENV}=1 git commit ...)\n"
    )
    return 1

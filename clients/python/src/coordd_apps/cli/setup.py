"""`coord setup [HOST]`: one command per host, and `--remove` to undo it."""

from __future__ import annotations

import sys
from pathlib import Path

from coordd_apps.cli.context import EXIT_ERROR, EXIT_OK, Context
from coordd_apps.cli.registry import arg, command
from coordd_apps.setup import apply, hosts
from coordd_apps.setup.formats import Unparsable

#: What the user still has to do after setup, per host (docs/HOSTS.md, "by hand").
RESTART = {
    "claude": "start a new Claude Code session (in any worktree; tabs already open keep"
    " their old settings)",
    "codex": "start Codex and trust the new hooks once: Codex skips new or changed hooks"
    " until you review them in /hooks (again after an upgrade of coord changes a command);"
    " `coord doctor` shows which are trusted",
    "cursor": "reload Cursor and approve the `coord` MCP server in its MCP settings",
    "git": "commits in every worktree of this repository now check reservations",
}
#: With --worktree, the files hold this machine's path to coord: say so.
WORKTREE_NOTE = (
    "these files are this worktree's and hold this machine's path to coord: do not"
    " commit them, and run `coord setup HOST --worktree` in each one (or use the"
    " default user scope, which covers every worktree)"
)


@command(
    "setup",
    "register coord's MCP server, hooks and instructions with a host (none: detect, write nothing)",
    "coord setup claude   # then: coord setup claude --remove",
    arg("host", nargs="?", choices=sorted(hosts.HOSTS), help="claude, codex, cursor or git"),
    arg("--user", action="store_true", help="the user-wide files (the default)"),
    arg(
        "--worktree",
        dest="per_worktree",
        action="store_true",
        help="this worktree's files instead of the user-wide ones",
    ),
    arg("--dry-run", action="store_true", help="print the diff it would apply; write nothing"),
    arg("--remove", action="store_true", help="take out exactly what setup added"),
    arg(
        "--no-auto-reserve",
        dest="auto_reserve",
        action="store_false",
        default=None,
        help="this repository in advisory mode: edits reserve nothing (.coord/config.json)",
    ),
    arg(
        "--auto-reserve",
        dest="auto_reserve",
        action="store_true",
        help="this repository's edits reserve their files again (the default)",
    ),
)
def setup(ctx: Context) -> int:
    args = ctx.args
    if args.auto_reserve is not None:
        switched = _switch(ctx, args.auto_reserve)
        if switched != EXIT_OK or args.host is None:
            return switched
    home = Path.home()
    user = not args.per_worktree and args.host != "git"
    try:
        root = None if user and args.host is not None else hosts.project_root()
    except hosts.SetupError as exc:
        if args.host is not None:
            sys.stderr.write(f"coord setup: {exc}\n")
            return EXIT_ERROR
        root = None
    if args.host is None:
        return _survey(ctx, home, root)
    try:
        targets = hosts.HOSTS[args.host](user, hosts.coord_command(), home, root)
        changes = apply.plan_remove(targets) if args.remove else apply.plan_add(targets)
    except (hosts.SetupError, Unparsable) as exc:
        sys.stderr.write(f"coord setup {args.host}: {exc}; nothing was written\n")
        return EXIT_ERROR
    changed = [c for c in changes if c.changes]
    # Named though not installed: set up all the same (it may be installed next), saying so.
    absent = None if args.remove or args.host not in hosts.HOST_HOMES else (
        hosts.absent_reason(args.host, home)
    )  # fmt: skip
    if absent is not None and changed:
        sys.stderr.write(
            f"coord setup {args.host}: note: {args.host} is {absent}; these settings take"
            " effect once it is installed\n"
        )
    if args.dry_run:
        sys.stdout.write(apply.diff(changes) or "nothing to change\n")
        return EXIT_OK
    if not changed:
        state = "not set up" if args.remove else "already set up"
        ctx.emit({"host": args.host, "changed": []}, f"{args.host}: {state}; nothing changed")
        return EXIT_OK
    apply.write(changes, removing=args.remove)
    lines = [f"{_verb(c)} {c.path}" for c in changed]
    if not args.remove:
        lines.append(f"next: {RESTART[args.host]}")
        if not user and args.host != "git":
            lines.append(f"note: {WORKTREE_NOTE}")
    ctx.emit({"host": args.host, "changed": [str(c.path) for c in changed]}, "\n".join(lines))
    return EXIT_OK


def _verb(change: apply.Change) -> str:
    if change.before is None:
        return "created"
    return "removed" if change.after is None else "updated"


def _survey(ctx: Context, home: Path, root: Path | None) -> int:
    """Every host, found or not: a host that is not installed is named and skipped,
    saying what was looked for, so a user never wonders why it was left out."""
    found = hosts.detect(home, root is not None)
    lines = []
    missing = []
    for host in (*hosts.HOST_HOMES, "git"):
        if host not in found:
            reason = hosts.absent_reason(host, home) if host != "git" else None
            missing.append(host)
            lines.append(f"{host}: {reason or 'not in a git repository here'}; skipped")
            continue
        lines.append(f"{host}: {_survey_one(host, home, root)}")
    if found:
        lines.append(
            "nothing was written; run one of the commands above (add --dry-run to see diffs)"
        )
    else:
        lines.append(
            "no agent host found: install Claude Code, Codex or Cursor, then run coord setup"
        )
    ctx.emit({"hosts": found, "skipped": missing}, "\n".join(lines))
    return EXIT_OK


def _survey_one(host: str, home: Path, root: Path | None) -> str:
    """What `coord setup HOST` would do for one found host, writing nothing."""
    try:
        targets = hosts.HOSTS[host](host != "git", hosts.coord_command(), home, root)
        pending = [c for c in apply.plan_add(targets) if c.changes]
    except (hosts.SetupError, Unparsable) as exc:
        return f"cannot set up here: {exc}"
    if not pending:
        return "set up already"
    return f"`coord setup {host}` would write " + ", ".join(str(c.path) for c in pending)


def _switch(ctx: Context, on: bool) -> int:
    """The repository's reserve-on-first-edit switch (`setup/auto_reserve.py`)."""
    from coordd_apps.setup import auto_reserve

    try:
        path, changed = auto_reserve.switch(on)
    except hosts.SetupError as exc:
        sys.stderr.write(f"coord setup: {exc}\n")
        return EXIT_ERROR
    mode = "edits reserve their files" if on else "advisory mode: edits reserve nothing"
    state = f"wrote {path}" if changed else f"{path}: already so"
    ctx.emit({"auto_reserve": on, "path": str(path), "changed": changed}, f"{state} ({mode})")
    return EXIT_OK

"""`coord setup [HOST]`: one command per host, and `--remove` to undo it."""

from __future__ import annotations

import sys
from pathlib import Path

from coordd_client.cli.context import EXIT_ERROR, EXIT_OK, Context
from coordd_client.cli.registry import arg, command
from coordd_client.setup import apply, hosts
from coordd_client.setup.formats import Unparsable

RESTART = {
    "claude": "start a new Claude Code session here (approve the `coord` MCP server once)",
    "codex": "start a new Codex session",
    "cursor": "reload Cursor and approve the `coord` MCP server in its MCP settings",
    "git": "commits now check reservations",
}


@command(
    "setup",
    "register coord's MCP server, hooks and instructions with a host (none: detect, write nothing)",
    "coord setup claude   # then: coord setup claude --remove",
    arg("host", nargs="?", choices=sorted(hosts.HOSTS), help="claude, codex, cursor or git"),
    arg("--user", action="store_true", help="the user-wide files, not this repository's"),
    arg("--dry-run", action="store_true", help="print the diff it would apply; write nothing"),
    arg("--remove", action="store_true", help="take out exactly what setup added"),
)
def setup(ctx: Context) -> int:
    args = ctx.args
    home = Path.home()
    try:
        root = None if args.user else hosts.project_root()
    except hosts.SetupError as exc:
        if args.host is not None:
            sys.stderr.write(f"coord setup: {exc}\n")
            return EXIT_ERROR
        root = None
    if args.host is None:
        return _survey(ctx, home, root)
    try:
        targets = hosts.HOSTS[args.host](args.user, hosts.coord_command(), home, root)
        changes = apply.plan_remove(targets) if args.remove else apply.plan_add(targets)
    except (hosts.SetupError, Unparsable) as exc:
        sys.stderr.write(f"coord setup {args.host}: {exc}; nothing was written\n")
        return EXIT_ERROR
    changed = [c for c in changes if c.changes]
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
    ctx.emit({"host": args.host, "changed": [str(c.path) for c in changed]}, "\n".join(lines))
    return EXIT_OK


def _verb(change: apply.Change) -> str:
    if change.before is None:
        return "created"
    return "removed" if change.after is None else "updated"


def _survey(ctx: Context, home: Path, root: Path | None) -> int:
    found = hosts.detect(home, root is not None)
    if not found:
        ctx.emit({"hosts": []}, "no agent host found (~/.claude, ~/.codex, ~/.cursor)")
        return EXIT_OK
    lines = []
    for host in found:
        scope_user = root is None
        try:
            targets = hosts.HOSTS[host](scope_user, hosts.coord_command(), home, root)
            pending = [c for c in apply.plan_add(targets) if c.changes]
        except (hosts.SetupError, Unparsable) as exc:
            lines.append(f"{host}: cannot set up here: {exc}")
            continue
        if pending:
            files = ", ".join(str(c.path) for c in pending)
            lines.append(f"{host}: `coord setup {host}` would write {files}")
        else:
            lines.append(f"{host}: set up already")
    lines.append("nothing was written; run one of the commands above (add --dry-run to see diffs)")
    ctx.emit({"hosts": found}, "\n".join(lines))
    return EXIT_OK

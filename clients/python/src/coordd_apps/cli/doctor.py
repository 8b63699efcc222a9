"""`coord doctor`: ask the daemon and each host what they loaded; say what is missing.

Exit 0 when nothing is missing (hosts not installed are skipped, saying so),
1 otherwise. It never starts a daemon and never writes a file: the hosts' MCP
servers it starts to see which board each reaches (`doctor.boards`) are told
not to start one, and stop with it.
"""

from __future__ import annotations

from pathlib import Path

from coordd_apps import doctor
from coordd_apps.cli.context import EXIT_ERROR, EXIT_OK, Context
from coordd_apps.cli.registry import arg, command, package_version
from coordd_apps.wording.advice import plural
from coordd_wire.errors import SeveralBoards

SECTIONS = ("daemon", "boards", "claude", "codex", "worktrees", "edits", "landing")


@command(
    "doctor",
    "check the daemon and each host's coord setup; name the fixes",
    "coord doctor",
    arg(
        "--wait",
        action="store_true",
        help="let `claude mcp list` run to its end (it can take 20 s waiting on the network)",
    ),
)
def doctor_command(ctx: Context) -> int:
    try:
        socket = ctx.socket
    except SeveralBoards:  # the split itself is what the boards section reports
        socket = ctx.route.path
    findings = doctor.run_checks(
        ctx.route, socket, ctx.autostart, Path.cwd(), package_version(), wait=ctx.args.wait
    )
    problems = [f for f in findings if not f.ok]
    fixes = list(dict.fromkeys(f.fix for f in problems if f.fix))
    report = {
        "ok": not problems,
        "problems": causes(problems, fixes),
        "failed_checks": len(problems),
        "fixes": fixes,
        "checks": [f.as_json() for f in findings],
    }
    ctx.emit(report, render(findings, fixes))
    return EXIT_ERROR if problems else EXIT_OK


def causes(problems: list[doctor.Finding], fixes: list[str]) -> int:
    """How many things are wrong: one per distinct fix, and each failure with none.

    One cause fails many checks (four untrusted Codex hooks fail each hook's
    check and every worktree's coverage, all fixed by one review in `/hooks`);
    counting checks told a user of eight problems where there was one.
    """
    return len(fixes) + sum(1 for f in problems if not f.fix)


def render(findings: list[doctor.Finding], fixes: list[str]) -> str:
    lines = []
    for section in SECTIONS:
        mine = [f for f in findings if f.section == section]
        if not mine:
            continue
        lines.append(f"{section}:")
        for finding in mine:
            mark = (
                "skip"
                if finding.skipped
                else "note"
                if finding.note
                else "ok  "
                if finding.ok
                else "FAIL"
            )
            lines.append(f"  {mark} {finding.detail}")
            if not finding.ok and finding.fix:
                lines.append(f"       fix: {finding.fix}")
    problems = [f for f in findings if not f.ok]
    if problems:
        count = causes(problems, fixes)
        failed = plural(len(problems), "failed check")
        lines.append(
            f"{plural(count, 'problem')} ({failed}); to fix {'it' if count == 1 else 'them'}:"
        )
        lines += [f"  {fix}" for fix in fixes]
    else:
        lines.append("nothing missing")
    return "\n".join(lines)

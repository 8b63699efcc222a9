"""`coord export`: the event log as Markdown for people or JSONL for tools, streamed."""

from __future__ import annotations

import sys
from typing import IO

from coordd_apps.cli.arguments import task_id
from coordd_apps.cli.context import EXIT_ERROR, EXIT_OK, Context
from coordd_apps.cli.registry import arg, command


@command(
    "export",
    "the audit trail: Markdown (a section per task) or JSONL (one event a line), streamed",
    "coord export --format md --since 2026-12-01 -o audit.md",
    arg("--format", choices=("md", "jsonl"), default="md", help="md (default) or jsonl"),
    arg("--task", type=task_id, metavar="ID", help="one task's history only"),
    arg("--since", metavar="TIME", help="events at or after this ISO time (2026-12-01T10:00Z)"),
    arg("--until", metavar="TIME", help="events at or before this ISO time"),
    arg("--all-projects", action="store_true", help="every project, not this one"),
    arg("-o", "--output", metavar="FILE", help="write here instead of stdout"),
)
def export(ctx: Context) -> int:
    from coordd_apps import export as trail
    from coordd_apps import export_markdown

    args = ctx.args
    try:
        span = trail.Range(
            trail.parse_moment(args.since) if args.since else None,
            trail.parse_moment(args.until) if args.until else None,
        )
    except ValueError as exc:
        sys.stderr.write(f"coord: export: not an ISO time: {exc}\n")
        return EXIT_ERROR
    project = None if args.all_projects or args.task else ctx.project
    write = trail.write_jsonl if args.format == "jsonl" else export_markdown.write_markdown
    out: IO[bytes] = open(args.output, "wb") if args.output else sys.stdout.buffer  # noqa: SIM115
    try:
        with ctx.client() as client:
            write(client, out, project=project, task_id=args.task, span=span)
    finally:
        out.flush()
        if args.output:
            out.close()
    return EXIT_OK

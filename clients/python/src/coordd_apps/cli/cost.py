"""`coord cost` (issue 48): what the model calls of every tab cost, per task, per agent,
per model, from the token ledger. Token counts are facts the hosts wrote; dollars are
an estimate (`prices.py`), labelled `est.`, from a price table `.coord/config.json`
may override."""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from coordd_apps.cli.arguments import task_id
from coordd_apps.cli.context import EXIT_ERROR, EXIT_OK, Context
from coordd_apps.cli.registry import arg, command

if TYPE_CHECKING:
    from coordd_client.client import Client

_SPAN = re.compile(r"(\d+(?:\.\d+)?)([smhdw])")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def instant(text: str, now: datetime | None = None) -> str:
    """`2h`, `30m`, `7d` ago, or an ISO time (UTC unless it says), as the wire's RFC 3339."""
    span = _SPAN.fullmatch(text.strip())
    if span:
        ago = timedelta(seconds=float(span.group(1)) * _UNIT_S[span.group(2)])
        moment = (now or datetime.now(UTC)) - ago
    else:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


@command(
    "cost",
    "tokens each task, agent and model cost (from the hooks' usage reports), with $ est.",
    "coord cost --task 42 --since 1d  (--agent NAME: that agent's calls only)",
    arg("--task", type=task_id, metavar="N", help="one task only"),
    arg("--model", metavar="MODEL", help="one model's calls only"),
    arg("--since", metavar="WHEN", help="calls at or after: 2h, 7d, or an ISO time"),
    arg("--until", metavar="WHEN", help="calls before: 2h, 7d, or an ISO time"),
    arg("--all-projects", action="store_true", help="every project, not this one"),
)
def cost(ctx: Context) -> int:
    from coordd_apps import cost_report, prices

    args = ctx.args
    try:
        since = instant(args.since) if args.since else None
        until = instant(args.until) if args.until else None
    except ValueError:
        bad = args.since if args.since and not _is_instant(args.since) else args.until
        sys.stderr.write(
            f"coord: cost: {bad!r} is not a span ago (30m, 2h, 7d, 2w)"
            " or an ISO time (2026-12-06T08:00Z)\n"
        )
        return EXIT_ERROR
    # `--agent` names whose calls to sum here, not who asks: the ledger is read by anyone.
    of = getattr(args, "agent", None)
    project = None if args.all_projects or args.task else ctx.project
    with ctx.client() as client:
        if args.task is not None and not _exists(client, args.task):
            sys.stderr.write(f"coord: cost: no task #{args.task} (`coord ls` lists them)\n")
            return EXIT_ERROR
        result = client.cost(
            project=project, task_id=args.task, agent=of, model=args.model,
            since=since, until=until,
        )  # fmt: skip
        titles = _titles(client, [row.task_id for row in result.rows])
    table, problem = prices.load(ctx.project)
    if problem:
        sys.stderr.write(f"coord: cost: default prices used: {problem}\n")
    summary = cost_report.summarize(result, table)
    narrowed = any((args.task, of, args.model, since, until))
    ctx.emit({**summary, "rows": result.rows}, _human(summary, titles, narrowed))
    return EXIT_OK


def _is_instant(text: str) -> bool:
    try:
        instant(text)
    except ValueError:
        return False
    return True


def _exists(client: Client, task: int) -> bool:
    from coordd_wire.errors import NotFound

    try:
        client.get(task)
    except NotFound:
        return False
    return True


def _titles(client: Client, ids: list[int | None]) -> dict[int, str]:
    """The titles of the first tasks shown (a few calls, not one per row of a long list)."""
    from coordd_wire.errors import NotFound

    found: dict[int, str] = {}
    for task in dict.fromkeys(t for t in ids if t is not None):
        if len(found) == 20:
            break
        try:
            found[task] = client.get(task).task.title
        except NotFound:
            found[task] = ""
    return found


def _human(summary: dict[str, Any], titles: dict[int, str], narrowed: bool = False) -> str:
    from coordd_apps import cost_report
    from coordd_client.text import clean

    totals = summary["totals"]
    budgets = [
        f"#{budget['task_id']} budget: {cost_report.tokens(budget['spent'])} of"
        f" {cost_report.tokens(budget['tokens'])} tokens ({budget['percent']}%)"
        for budget in summary["budgets"]
    ]
    if not totals["total"]:
        nothing = (
            "no usage matches (widen --task, --agent, --model, --since or --until)"
            if narrowed
            else "no usage recorded (the hooks report it; `coord setup` installs them)"
        )
        return "\n\n".join([nothing, *budgets])

    def task_name(key: object) -> str:
        if key is None:
            return "unattributed"
        title = clean(titles.get(key, ""))[:40] if isinstance(key, int) else ""
        return f"#{key} {title}".rstrip()

    parts = [
        cost_report.table("TASK", summary["by_task"], task_name),
        cost_report.table("AGENT", summary["by_agent"], str),
        cost_report.table("MODEL", summary["by_model"], str),
        f"total {cost_report.tokens(totals['total'])} tokens,"
        f" {cost_report.dollars(totals['usd_est'])}"
        " (token counts as the hosts reported them; dollars estimated from list prices)",
    ]
    parts.extend(budgets)
    unpriced = summary["unpriced"]
    if unpriced:
        parts.append(f"no price for {', '.join(map(str, unpriced))} (add it under"
                     ' "prices" in .coord/config.json)')  # fmt: skip
    if summary["more"]:
        parts.append("(more rows than one answer holds: narrow with --task, --agent or --since)")
    return "\n\n".join(parts)

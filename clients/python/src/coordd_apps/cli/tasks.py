"""Commands on tasks: post, ls, show, claim, next, renew, release, done, fail, cancel, reopen."""

from __future__ import annotations

import sys
from typing import Any

from coordd_apps import cost_report
from coordd_apps.cli import held
from coordd_apps.cli.arguments import (
    FENCE,
    KIND,
    LEASE,
    REQUEST_KEY,
    STATE_CHOICES,
    TASK_ID,
    task_id,
    tokens,
)
from coordd_apps.cli.blockers import blockers_elsewhere
from coordd_apps.cli.context import EXIT_EMPTY, EXIT_ERROR, EXIT_LOST, EXIT_OK, Context
from coordd_apps.cli.registry import arg, command
from coordd_apps.cli.seen import note_if_unseen
from coordd_apps.wording import render
from coordd_client import acks
from coordd_client.paging import every_urgent, most_urgent, task_history
from coordd_client.text import clean
from coordd_wire.wire import ListResult, Task

#: The states `ls` shows without --all.
OPEN_STATES = ["pending", "claimed"]


@command(
    "post",
    "post a task, bug, hand-off or announcement",
    'coord post "Fix flaky test_io" -k bug -p 5 -t ci',
    arg("title"),
    arg("-b", "--body", help="details; '-' reads them from stdin"),
    arg("-k", "--kind", help="task (default), bug, ack, handoff, note, question"),
    arg("-p", "--priority", type=int, help="-1000..1000, higher is more urgent"),
    arg("-t", "--tag", action="append", dest="tags", help="repeatable"),
    arg("--done", action="store_true", help="an announcement nobody needs to claim"),
    arg("--key", help="idempotency key: posting twice with it creates one task"),
    arg(
        "--after",
        action="append",
        type=task_id,
        dest="depends_on",
        metavar="ID",
        help="claimable only once task ID is done (repeatable: a plan's order)",
    ),
    arg(
        "--to",
        metavar="AGENT",
        dest="assignee",
        help="hand it to this agent: only they claim it (human: a gate for the user)",
    ),
    arg(
        "--budget",
        type=tokens,
        metavar="TOKENS",
        help="tokens it may cost, all kinds (2M, 500k): warned at 80%% and 100%%",
    ),
    arg(
        "--budget-release",
        action="store_true",
        default=None,
        help="with --budget: release the holder's claim once it is spent",
    ),
)
def post(ctx: Context) -> int:
    args = ctx.args
    if args.budget_release and args.budget is None:
        sys.stderr.write(
            "coord: post: --budget-release needs --budget (--budget 2M --budget-release)\n"
        )
        return EXIT_ERROR
    body = sys.stdin.read() if args.body == "-" else args.body
    with ctx.client() as client:
        result = client.post(
            args.title,
            body=body,
            kind=args.kind,
            project=ctx.project,
            priority=args.priority,
            tags=args.tags,
            agent=ctx.agent,
            state="done" if args.done else None,
            idempotency_key=args.key,
            depends_on=args.depends_on,
            assignee=args.assignee,
            budget=args.budget,
            budget_release=args.budget_release,
        )
        elsewhere = blockers_elsewhere(client, [result.task], ctx.project, every=True)
        note_if_unseen(client, args.assignee, "only that name can claim it")
    verb = "posted" if result.created else "already posted (same --key)"
    human = f"{verb} {render.one_line(result.task)}"
    if args.budget is not None:  # issue 48: said back, as `coord show` has it
        human += f"; budget {cost_report.tokens(args.budget)} tokens"
        human += ", its claim released once spent" if args.budget_release else ""
    ctx.emit(result, human)
    for dependency, other in sorted(elsewhere.items()):
        # PROTOCOL.md section 9 allows any project; say so, since ls here will not list it.
        sys.stderr.write(f"coord: note: #{dependency} is a task of project {clean(other)}\n")
    return EXIT_OK


@command(
    "ls",
    "list open work in this project, most urgent first",
    "coord ls --mine",
    arg("--state", action="append", choices=STATE_CHOICES, help="repeatable; overrides --all"),
    arg("--all", action="store_true", help="every state, in id order (default: open work)"),
    arg("--kind"),
    arg("--tag"),
    arg("--mine", action="store_true", help="only open tasks you hold or that are assigned to you"),
    arg("--ready", action="store_true", help="only ready tasks: pending, dependencies done"),
    arg("--blocked", action="store_true", help="only pending tasks waiting on dependencies"),
    arg("--all-projects", action="store_true", help="every project, with a project column"),
    arg("--limit", type=int, default=100),
    arg("--after", type=int, default=0, help="with --all: list ids after this one (paging)"),
)
def ls(ctx: Context) -> int:
    args = ctx.args
    project = None if args.all_projects else ctx.project
    states = args.state or (None if args.all else OPEN_STATES)
    if args.ready or args.blocked:
        states = None  # `ready` implies pending
    filters: dict[str, Any] = {
        "project": project,
        "state": states,
        "kind": args.kind,
        "tag": args.tag,
        "ready": True if args.ready else False if args.blocked else None,
    }
    next_after: int | None = None  # paging in id order (--all)
    left_out = 0  # cut by --limit from a priority-ordered list
    with ctx.client() as client:
        if args.mine:
            # Held by me, or assigned to me: two reads, one list.
            held_tasks = every_urgent(client, **filters, claimed_by=ctx.agent)
            assigned = every_urgent(client, **filters, assignee=ctx.agent)
            merged = {t.id: t for t in [*held_tasks, *assigned]}
            tasks, left_out = _most_urgent(list(merged.values()), args.limit)
        elif args.all and not args.state:
            result = client.list_tasks(**filters, after_id=args.after or None, limit=args.limit)
            tasks, next_after = result.tasks, result.next_after_id
        else:
            # The daemon answers the rows shown and counts the rest (1.2 section 6c).
            tasks, counts = most_urgent(client, args.limit, **filters)
            left_out = sum(counts.values()) - len(tasks)
        elsewhere = {} if project is None else blockers_elsewhere(client, tasks, project)
    scope = "every project" if project is None else f"project {clean(project)}"
    if not tasks:
        narrowed = bool(args.all or args.state or args.ready or args.blocked)
        hints = [] if narrowed else ["--all for done ones"]
        if project is not None:
            hints.append("--all-projects for every project")
        what = (
            "ready tasks"
            if args.ready
            else "blocked tasks"
            if args.blocked
            else ("tasks" if narrowed else "open tasks")
        )
        human = f"no {what} in {scope}" + (f" ({'; '.join(hints)})" if hints else "")
    else:
        human = render.task_table(tasks, with_project=project is None, elsewhere=elsewhere)
        if next_after is not None:
            human += f"\n(more: coord ls --all --after {next_after})"
        elif left_out:
            human += f"\n({left_out} more: raise --limit)"
    ctx.emit(ListResult(tasks=tasks, next_after_id=next_after), human)
    return EXIT_OK


def _most_urgent(tasks: list[Task], limit: int) -> tuple[list[Task], int]:
    """The first `limit` by priority, then id; and how many were left out."""
    ordered = sorted(tasks, key=lambda t: (-t.priority, t.id))
    return ordered[:limit], max(0, len(ordered) - limit)


@command(
    "show",
    "show one task in full",
    "coord show 42 --history",
    TASK_ID,
    arg("--history", action="store_true", help="also every event of the task: who did what"),
)
def show(ctx: Context) -> int:
    with ctx.client() as client:
        result = client.get(ctx.args.id)
        history = task_history(client, ctx.args.id, budgets=True) if ctx.args.history else None
        cost = cost_report.task_costs(client, project=None, task_id=ctx.args.id)
    human = render.task_detail(result.task)
    if ctx.args.id in cost:  # issue 48: tokens charged so far, and the budget if any
        human += f"\ncost:        {cost[ctx.args.id]}"
    if history is not None:
        human += "\n\nhistory:\n" + "\n".join(render.history_line(e) for e in history)
        ctx.emit({"task": result.task, "history": history}, human)
    else:
        ctx.emit(result, human)
    return EXIT_OK


@command(
    "claim",
    "claim one task (exit 3 and the holder if someone else has it)",
    "coord claim 42 --lease 1800",
    TASK_ID,
    LEASE,
    REQUEST_KEY,
)
def claim(ctx: Context) -> int:
    args = ctx.args
    with ctx.client() as client:
        result = client.claim(args.id, ctx.agent, lease_s=args.lease, request_key=args.request_key)
    task = result.task
    if result.won:
        held.remember(ctx.agent, task.id, task.fence)
        ctx.emit(
            result,
            f"claimed {render.one_line(task)} as {ctx.agent}"
            f" (fence {task.fence}, lease ends {render.relative(task.lease_expires_at)})",
        )
        return EXIT_OK
    holder = f"held by {task.claimed_by}" if task.state == "claimed" else f"it is {task.state}"
    ctx.emit(result, f"lost #{task.id}: {clean(holder)}; pick something else")
    return EXIT_LOST


@command(
    "next",
    "claim the most urgent pending task (exit 4 if none)",
    "coord next -k bug -t parser",
    KIND,
    arg("-t", "--tag", action="append", dest="tags", help="all must match"),
    LEASE,
    REQUEST_KEY,
)
def next_(ctx: Context) -> int:
    args = ctx.args
    with ctx.client() as client:
        result = client.claim_next(
            ctx.agent,
            project=ctx.project,
            kind=args.kind,
            tags=args.tags,
            lease_s=args.lease,
            request_key=args.request_key,
        )
    if result.task is None:
        ctx.emit(result, f"nothing to claim in project {clean(ctx.project)}")
        return EXIT_EMPTY
    task = result.task
    held.remember(ctx.agent, task.id, task.fence)
    ctx.emit(
        result,
        f"claimed {render.one_line(task)} as {ctx.agent}"
        f" (fence {task.fence}, lease ends {render.relative(task.lease_expires_at)})",
    )
    return EXIT_OK


@command("renew", "extend your lease on a task", "coord renew 42", TASK_ID, FENCE, LEASE)
def renew(ctx: Context) -> int:
    with ctx.client() as client:
        result = client.renew(ctx.args.id, ctx.agent, fence=ctx.args.fence, lease_s=ctx.args.lease)
    lease_ends = render.relative(result.task.lease_expires_at)
    ctx.emit(result, f"renewed #{result.task.id}: lease ends {lease_ends}")
    return EXIT_OK


@command(
    "release",
    "give a claimed task back, or hand it to another agent with --to",
    "coord release 42 --to cursor-2",
    TASK_ID,
    FENCE,
    arg("--to", metavar="AGENT", dest="assignee", help="hand it to this agent in the same step"),
)
def release(ctx: Context) -> int:
    with ctx.client() as client:
        result = client.release(
            ctx.args.id, ctx.agent, fence=ctx.args.fence, assignee=ctx.args.assignee
        )
        note_if_unseen(client, ctx.args.assignee, "only that name can claim it")
    held.forget(ctx.agent, ctx.args.id)
    to = f", assigned to {clean(ctx.args.assignee)}" if ctx.args.assignee else ""
    ctx.emit(result, f"released #{result.task.id}: pending again{to}")
    return EXIT_OK


@command(
    "assign",
    "hand a pending task to an agent (only they may claim it); - clears it",
    "coord assign 42 cursor-2",
    TASK_ID,
    arg("assignee", metavar="AGENT", help="the agent, or - for nobody"),
)
def assign(ctx: Context) -> int:
    target = None if ctx.args.assignee == "-" else ctx.args.assignee
    with ctx.client() as client:
        result = client.assign(ctx.args.id, target, agent=ctx.agent)
        note_if_unseen(client, target, "only that name can claim it")
    to = f"assigned to {clean(target)}" if target else "no longer assigned"
    ctx.emit(result, f"#{result.task.id} {to}")
    return EXIT_OK


@command(
    "done",
    "complete a task you hold",
    'coord done 42 -r "fixed in abc123" --ack "parser fix landed"',
    TASK_ID,
    arg("-r", "--result"),
    arg(
        "--ack",
        metavar="TITLE",
        help="also post a done 'ack' announcement, atomically, tagged re:ID and with the"
        " task's tags (so `coord wait -k ack -t re:ID` finds it)",
    ),
    FENCE,
)
def done(ctx: Context) -> int:
    args = ctx.args
    with ctx.client() as client:
        then_post = None
        if args.ack:
            # The one ack of every surface (acks.follow_up): kind ack, done, re:ID.
            task = client.get(args.id).task
            then_post = acks.follow_up(task, {"title": args.ack, "agent": ctx.agent})
        result = client.complete(
            args.id, ctx.agent, fence=args.fence, result=args.result, then_post=then_post
        )
    held.forget(ctx.agent, args.id)
    ctx.emit(result, render.completion(result, asked_result=args.result, asked_ack=args.ack))
    return EXIT_OK


@command(
    "fail",
    "give up on a task you hold",
    'coord fail 42 --reason "needs a schema change" --retry',
    TASK_ID,
    arg("--reason"),
    arg("--retry", action="store_true", help="put it back to pending for someone else"),
    FENCE,
)
def fail(ctx: Context) -> int:
    args = ctx.args
    with ctx.client() as client:
        result = client.fail(
            args.id, ctx.agent, fence=args.fence, reason=args.reason, retry=args.retry or None
        )
    held.forget(ctx.agent, args.id)
    ctx.emit(result, f"failed #{result.task.id}: now {result.task.state}")
    return EXIT_OK


@command(
    "cancel",
    "cancel a pending or claimed task",
    'coord cancel 42 --reason "duplicate of 41"',
    TASK_ID,
    arg("--reason"),
)
def cancel(ctx: Context) -> int:
    with ctx.client() as client:
        result = client.cancel(ctx.args.id, agent=ctx.agent, reason=ctx.args.reason)
    ctx.emit(result, f"cancelled #{result.task.id}")
    return EXIT_OK


@command("reopen", "reopen a done, failed or cancelled task", "coord reopen 42", TASK_ID)
def reopen(ctx: Context) -> int:
    with ctx.client() as client:
        result = client.reopen(ctx.args.id, agent=ctx.agent)
    ctx.emit(result, f"reopened #{result.task.id}: pending again")
    return EXIT_OK

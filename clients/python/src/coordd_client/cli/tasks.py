"""Commands on tasks: post, ls, show, claim, next, renew, release, done, fail, cancel, reopen."""

from __future__ import annotations

import sys

from coordd_client import render
from coordd_client.cli.arguments import FENCE, KIND, LEASE, STATE_CHOICES, TASK_ID
from coordd_client.cli.context import EXIT_EMPTY, EXIT_LOST, EXIT_OK, Context
from coordd_client.cli.registry import arg, command


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
)
def post(ctx: Context) -> int:
    args = ctx.args
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
        )
    verb = "posted" if result.created else "already posted (same --key)"
    ctx.emit(result, f"{verb} {render.one_line(result.task)}")
    return EXIT_OK


@command(
    "ls",
    "list tasks in this project",
    "coord ls --state pending --state claimed",
    arg("--state", action="append", choices=STATE_CHOICES),
    arg("--kind"),
    arg("--tag"),
    arg("--mine", action="store_true", help="only tasks you hold"),
    arg("--all-projects", action="store_true"),
    arg("--limit", type=int, default=100),
    arg("--after", type=int, default=0, help="list ids after this one (paging)"),
)
def ls(ctx: Context) -> int:
    args = ctx.args
    with ctx.client() as client:
        result = client.list_tasks(
            project=None if args.all_projects else ctx.project,
            state=args.state,
            kind=args.kind,
            tag=args.tag,
            claimed_by=ctx.agent if args.mine else None,
            after_id=args.after or None,
            limit=args.limit,
        )
    human = render.task_table(result.tasks)
    if result.next_after_id is not None:
        human += f"\n(more: coord ls --after {result.next_after_id})"
    ctx.emit(result, human)
    return EXIT_OK


@command("show", "show one task in full", "coord show 42", TASK_ID)
def show(ctx: Context) -> int:
    with ctx.client() as client:
        result = client.get(ctx.args.id)
    ctx.emit(result, render.task_detail(result.task))
    return EXIT_OK


@command(
    "claim",
    "claim one task (exit 3 and the holder if someone else has it)",
    "coord claim 42 --lease 1800",
    TASK_ID,
    LEASE,
)
def claim(ctx: Context) -> int:
    with ctx.client() as client:
        result = client.claim(ctx.args.id, ctx.agent, lease_s=ctx.args.lease)
    task = result.task
    if result.won:
        ctx.emit(
            result,
            f"claimed {render.one_line(task)} as {ctx.agent}"
            f" (fence {task.fence}, lease ends {render.relative(task.lease_expires_at)})",
        )
        return EXIT_OK
    holder = f"held by {task.claimed_by}" if task.state == "claimed" else f"it is {task.state}"
    ctx.emit(result, f"lost #{task.id}: {render.clean(holder)}; pick something else")
    return EXIT_LOST


@command(
    "next",
    "claim the most urgent pending task (exit 4 if none)",
    "coord next -k bug -t parser",
    KIND,
    arg("-t", "--tag", action="append", dest="tags", help="all must match"),
    LEASE,
)
def next_(ctx: Context) -> int:
    args = ctx.args
    with ctx.client() as client:
        result = client.claim_next(
            ctx.agent, project=ctx.project, kind=args.kind, tags=args.tags, lease_s=args.lease
        )
    if result.task is None:
        ctx.emit(result, "nothing to claim")
        return EXIT_EMPTY
    ctx.emit(
        result,
        f"claimed {render.one_line(result.task)} as {ctx.agent} (fence {result.task.fence})",
    )
    return EXIT_OK


@command("renew", "extend your lease on a task", "coord renew 42", TASK_ID, FENCE, LEASE)
def renew(ctx: Context) -> int:
    with ctx.client() as client:
        result = client.renew(ctx.args.id, ctx.agent, fence=ctx.args.fence, lease_s=ctx.args.lease)
    lease_ends = render.relative(result.task.lease_expires_at)
    ctx.emit(result, f"renewed #{result.task.id}: lease ends {lease_ends}")
    return EXIT_OK


@command("release", "give a claimed task back", "coord release 42", TASK_ID, FENCE)
def release(ctx: Context) -> int:
    with ctx.client() as client:
        result = client.release(ctx.args.id, ctx.agent, fence=ctx.args.fence)
    ctx.emit(result, f"released #{result.task.id}: pending again")
    return EXIT_OK


@command(
    "done",
    "complete a task you hold",
    'coord done 42 -r "fixed in abc123" --ack "parser fix landed"',
    TASK_ID,
    arg("-r", "--result"),
    arg("--ack", metavar="TITLE", help="also post a done 'ack' announcement, atomically"),
    FENCE,
)
def done(ctx: Context) -> int:
    args = ctx.args
    with ctx.client() as client:
        then_post = None
        if args.ack:
            project = client.get(args.id).task.project
            then_post = {
                "title": args.ack,
                "kind": "ack",
                "state": "done",
                "project": project,
                "agent": ctx.agent,
            }
        result = client.complete(
            args.id, ctx.agent, fence=args.fence, result=args.result, then_post=then_post
        )
    human = f"done #{result.task.id}: {render.clean(result.task.title)}"
    if result.posted is not None:
        human += f"\nposted ack #{result.posted.id}: {render.clean(result.posted.title)}"
    ctx.emit(result, human)
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

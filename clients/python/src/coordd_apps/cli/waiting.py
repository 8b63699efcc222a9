"""Commands that block on the board: wait and watch."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import msgspec

from coordd_apps.cli.arguments import KIND, STATE_CHOICES, task_id
from coordd_apps.cli.context import EXIT_OK, EXIT_TIMEOUT, Context
from coordd_apps.cli.registry import arg, command
from coordd_apps.wording import render
from coordd_client.client import Client
from coordd_wire.bounds import MAX_TIMEOUT_S
from coordd_wire.wire import Task, WaitResult, served_event_types

#: `wait` without --timeout blocks in chained waits of this many seconds (the protocol's maximum).
LONGEST_WAIT_S = float(MAX_TIMEOUT_S)


#: What `wait ID` waits for without --state: the task finishing, one way or another.
FINISHED = ["done", "failed", "cancelled"]


@command(
    "wait",
    "block until a task matches, or until task ID reaches a state (exit 2 on timeout)",
    "coord wait 42 --state done --timeout 600",
    arg("id", nargs="?", type=task_id, help="wait for this task (42 or #42)"),
    KIND,
    arg("--state", action="append", choices=STATE_CHOICES, help="repeatable"),
    arg("-t", "--tag", help="for example re:42, the tag of task 42's ack"),
    arg("--title-contains"),
    arg("--since-now", action="store_true", help="ignore tasks that already match"),
    arg("--after-seq", type=int, help="only changes after this seq (chain from a result)"),
    arg("--to-me", action="store_true", help="the inbox: ready tasks assigned to you"),
    arg("--timeout", type=float, help="seconds; without it, wait until a match"),
)
def wait(ctx: Context) -> int:
    args = ctx.args
    with ctx.client() as client:
        after_seq = args.after_seq
        if after_seq is None and args.since_now:
            after_seq = client.server_info().last_seq
        if args.id is not None:
            result = _wait_for_task(
                client, args.id, args.state or FINISHED, after_seq, args.timeout
            )
        else:
            filters = {
                "project": ctx.project,
                "kind": args.kind,
                "state": args.state,
                "tag": args.tag,
                "title_contains": args.title_contains,
                "assignee": ctx.agent if args.to_me else None,
                "ready": True if args.to_me else None,
            }
            result = _chained_wait(client, filters, after_seq, args.timeout, lambda task: True)
    if result.task is None:
        ctx.emit(result, f"timed out after {args.timeout}s (seq {result.seq})")
        return EXIT_TIMEOUT
    ctx.emit(result, f"matched {render.one_line(result.task)} (seq {result.seq})")
    return EXIT_OK


def _wait_for_task(
    client: Client,
    task_id: int,
    states: list[str],
    after_seq: int | None,
    timeout: float | None,
) -> WaitResult:
    """Task `task_id` in one of `states`: now (unless `after_seq`), else its next such change."""
    task = client.get(task_id).task
    if after_seq is None:
        seq = client.server_info().last_seq
        if task.state in states:
            return WaitResult(task=task, seq=seq)
        after_seq = seq
    # A task's project, kind and title never change: they narrow the wait to
    # (nearly) this task; the id check below makes it exact.
    filters: dict[str, Any] = {
        "project": task.project,
        "kind": task.kind,
        "state": states,
        "title_contains": task.title,
    }
    return _chained_wait(client, filters, after_seq, timeout, lambda t: t.id == task_id)


def _chained_wait(
    client: Client,
    filters: dict[str, Any],
    after_seq: int | None,
    timeout: float | None,
    wanted: Callable[[Task], bool],
) -> WaitResult:
    """`task.wait` again and again from each answer's seq: nothing committed between is missed."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = LONGEST_WAIT_S if deadline is None else max(0.0, deadline - time.monotonic())
        result = client.wait(timeout_s=min(left, LONGEST_WAIT_S), after_seq=after_seq, **filters)
        if result.task is not None and wanted(result.task):
            return result
        after_seq = result.seq
        if deadline is not None and time.monotonic() >= deadline:
            return WaitResult(task=None, seq=result.seq)


@command(
    "watch",
    "stream events until interrupted",
    "coord watch --since 0",
    arg("--since", type=int, help="replay events after this seq first"),
    arg("--all-projects", action="store_true", help="every project's events"),
)
def watch(ctx: Context) -> int:
    with ctx.client() as client:  # starts a daemon first if needed
        types = served_event_types(client.server_info().features)
    # Every type named: 1.2's events with no task (edits, messages, slots, landings)
    # reach only a subscriber that asks for them.
    stream = Client(ctx.socket).subscribe(
        after_seq=ctx.args.since,
        project=None if ctx.args.all_projects else ctx.project,
        types=types,
    )
    try:
        for event in stream:
            line = msgspec.json.encode(event).decode() if ctx.json else render.event_line(event)
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
    except KeyboardInterrupt:
        pass
    finally:
        stream.close()
    return EXIT_OK

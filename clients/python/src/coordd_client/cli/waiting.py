"""Commands that block on the board: wait and watch."""

from __future__ import annotations

import sys

import msgspec

from coordd_client import render
from coordd_client.cli.arguments import KIND, STATE_CHOICES
from coordd_client.cli.context import EXIT_OK, EXIT_TIMEOUT, Context
from coordd_client.cli.registry import arg, command
from coordd_client.client import Client

#: `wait` without --timeout blocks in chained waits of this many seconds (the protocol's maximum).
LONGEST_WAIT_S = 3600.0


@command(
    "wait",
    "block until a task matches (exit 2 on timeout)",
    "coord wait -k ack --title-contains parser --timeout 600",
    KIND,
    arg("--state", choices=STATE_CHOICES),
    arg("-t", "--tag"),
    arg("--title-contains"),
    arg("--since-now", action="store_true", help="ignore tasks that already match"),
    arg("--timeout", type=float, help="seconds; without it, wait until a match"),
)
def wait(ctx: Context) -> int:
    args = ctx.args
    filters = {
        "project": ctx.project,
        "kind": args.kind,
        "state": args.state,
        "tag": args.tag,
        "title_contains": args.title_contains,
    }
    with ctx.client() as client:
        after_seq = client.server_info().last_seq if args.since_now else None
        remaining = args.timeout
        while True:
            chunk = LONGEST_WAIT_S if remaining is None else min(remaining, LONGEST_WAIT_S)
            result = client.wait(timeout_s=chunk, after_seq=after_seq, **filters)
            if result.task is not None:
                break
            after_seq = result.seq  # chain: nothing committed in between is missed
            if remaining is not None:
                remaining -= chunk
                if remaining <= 0:
                    break
    if result.task is None:
        ctx.emit(result, f"timed out after {args.timeout}s (seq {result.seq})")
        return EXIT_TIMEOUT
    ctx.emit(result, f"matched {render.one_line(result.task)} (seq {result.seq})")
    return EXIT_OK


@command(
    "watch",
    "stream events until interrupted",
    "coord watch --since 0",
    arg("--since", type=int, help="replay events after this seq first"),
)
def watch(ctx: Context) -> int:
    ctx.client().close()  # start a daemon first if needed
    stream = Client(ctx.socket).subscribe(
        after_seq=ctx.args.since, project=getattr(ctx.args, "project", None)
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

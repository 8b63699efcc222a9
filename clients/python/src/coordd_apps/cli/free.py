"""`coord unreserve --of NAME`: free another agent's reservations (a tab that has gone),
asking first, as `coord web` asks before it releases an agent's holdings.

What is freed is shown before the question: each reservation, and whether its
holder is gone (its end reported: docs/PROTOCOL-1.2.md section 2a) or when it was
last seen, so the person does not free the file of a tab that is at work. A run with
no terminal to ask on is refused unless `--yes` says the answer (scripts). The
release is `reservation.release` with `of` (section 10b), done as the caller; like
every reservation's end, it appends no event.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from coordd_apps.cli.context import EXIT_ERROR, EXIT_OK, Context, emit_error
from coordd_apps.wording import render
from coordd_apps.wording.advice import plural
from coordd_client.client import Client
from coordd_client.text import clean
from coordd_wire.errors import INVALID_PARAMS
from coordd_wire.wire import Reservation

FEATURE = "release_reservations_of"


def free(ctx: Context, of: str, patterns: Sequence[str], ids: Sequence[int] | None) -> int:
    """Show `of`'s reservations here that would go, ask, and free them as `ctx.agent`."""
    with ctx.client() as client:
        if not client.supports(FEATURE):
            return _refuse(ctx, f"this daemon cannot free another agent's reservations ({FEATURE})")
        held = [
            r
            for r in client.reservations(project=ctx.project, agent=of).reservations
            if (not patterns or r.pattern in patterns) and (not ids or r.id in ids)
        ]
        if not held:
            ctx.emit({"released": 0}, f"{clean(of)} holds no such reservation here")
            return EXIT_OK
        question = _question(client, of, held, ctx.agent)
        if not ctx.args.yes:
            if ctx.json or not sys.stdin.isatty():
                return _refuse(
                    ctx, f"freeing {of}'s reservations asks first: run it in a terminal, or"
                    " pass --yes",
                )  # fmt: skip
            sys.stderr.write(question + "\n")
            sys.stderr.flush()
            if input("Free them? [y/N] ").strip().lower() not in ("y", "yes"):
                ctx.emit({"released": 0}, "nothing freed")
                return EXIT_OK
        result = client.unreserve(
            [r.pattern for r in held], agent=ctx.agent, project=ctx.project, of=of
        )
    ctx.emit(
        result,
        f"freed {plural(result.released, 'reservation')} of {clean(of)};"
        f" done as {clean(ctx.agent)}",
    )
    return EXIT_OK


def _question(client: Client, of: str, held: list[Reservation], me: str) -> str:
    """What the person confirms: whose, how present it is, and each reservation."""
    known = {a.agent: a for a in client.agents().agents}
    info = known.get(of)
    if info is None:
        presence = "never seen"
    elif info.ended_at is not None:
        presence = f"gone: its tab ended {render.relative(info.ended_at)}"
    else:
        presence = f"not known to be gone: last seen {render.relative(info.last_seen)}"
    lines = [
        f"Free {plural(len(held), 'reservation')} of {clean(of)} ({presence}), as {clean(me)}?"
    ]
    lines += [f"  {render.reservation_line(r)}" for r in held]
    return "\n".join(lines)


def _refuse(ctx: Context, message: str) -> int:
    emit_error(ctx.json, INVALID_PARAMS, message, {"kind": "refused"})
    return EXIT_ERROR

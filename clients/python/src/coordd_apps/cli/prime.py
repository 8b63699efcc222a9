"""`coord prime`: the board in a few lines, for an agent's context window."""

from __future__ import annotations

from coordd_apps.cli.context import EXIT_OK, Context
from coordd_apps.cli.registry import command
from coordd_apps.summary import summarize


@command(
    "prime", "the board in a few lines for your context: your claims, ready work", "coord prime"
)
def prime(ctx: Context) -> int:
    with ctx.client() as client:
        summary = summarize(client, ctx.agent, ctx.project)
    ctx.emit(
        {
            "agent": ctx.agent,
            "project": ctx.project,
            "text": summary.text,
            "my_claims": summary.my_claims,
            "ready": summary.ready[:20],
        },
        summary.text,
    )
    return EXIT_OK

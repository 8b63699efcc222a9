"""Commands about agents: agents and heartbeat."""

from __future__ import annotations

from coordd_client import render
from coordd_client.cli.arguments import LEASE
from coordd_client.cli.context import EXIT_OK, Context
from coordd_client.cli.registry import command


@command("agents", "list agents, when they were last seen, what they hold", "coord agents")
def agents(ctx: Context) -> int:
    with ctx.client() as client:
        result = client.agents()
    rows = [
        f"{render.clean(a.agent):<32}  last seen {render.relative(a.last_seen):<22}"
        f"  holding {a.holding}"
        for a in result.agents
    ]
    ctx.emit(result, "\n".join(rows) or "no agents yet")
    return EXIT_OK


@command("heartbeat", "renew every lease you hold", "coord heartbeat --lease 900", LEASE)
def heartbeat(ctx: Context) -> int:
    with ctx.client() as client:
        result = client.heartbeat(ctx.agent, lease_s=ctx.args.lease)
    ctx.emit(result, f"{ctx.agent}: renewed {result.renewed} lease(s)")
    return EXIT_OK

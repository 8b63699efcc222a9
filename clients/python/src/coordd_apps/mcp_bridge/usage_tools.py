"""The MCP tool of issue 48's token ledger (docs/PROTOCOL-1.2.md section 15): `task_cost`.

Apart from `tools.py` and registered by it; a thin adapter over
`coordd_client.methods_usage.cost` and the summary `coord cost --json` gives
(`cost_report.summarize`): token counts as the ledger has them, dollars as an
estimate labelled `usd_est`. Reporting usage is the hooks' job, never a tool's:
a model cannot count its own tokens.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult

from coordd_apps import cost_report, prices
from coordd_apps.mcp_bridge import models as m
from coordd_apps.mcp_bridge import results
from coordd_apps.mcp_bridge.bridge import Bridge
from coordd_apps.mcp_bridge.traits import READ_ONLY
from coordd_client import methods_usage
from coordd_wire import bounds
from coordd_wire.errors import CoordError
from coordd_wire.wire_usage import CostResult

Instant = Annotated[str, m.field(bounds.USAGE_AT, "RFC 3339, e.g. 2026-12-06T07:00:00Z")]


class CostGroup(msgspec.Struct, frozen=True, kw_only=True):
    """One task (None: unattributed), agent or model: its tokens and the estimate."""

    key: int | str | None
    input: int
    output: int
    cache_creation: int
    cache_read: int
    total: int
    usd_est: float | None


class BudgetUse(msgspec.Struct, frozen=True, kw_only=True):
    task_id: int
    tokens: int
    spent: int
    percent: float


class CostSummary(msgspec.Struct, frozen=True, kw_only=True):
    """`cost_report.summarize`'s document, declared for the tool's output schema."""

    by_task: list[CostGroup]
    by_agent: list[CostGroup]
    by_model: list[CostGroup]
    totals: CostGroup
    unpriced: list[str]
    more: bool
    budgets: list[BudgetUse]


Summary = m.from_wire(CostSummary)


def register(server: MCPServer, bridge: Bridge) -> None:
    """Add the ledger's tool to `server`."""

    @server.tool(annotations=READ_ONLY)
    async def task_cost(
        ctx: Context,
        *,
        task_id: Annotated[int, m.field(bounds.TASK_ID)] | None = None,
        agent: Annotated[str, m.field(bounds.AGENT, "one agent's calls only")] | None = None,
        model: Annotated[str, m.field(bounds.USAGE_MODEL)] | None = None,
        since: Instant | None = None,
        until: Instant | None = None,
        limit: Annotated[int, m.field(bounds.COST_LIMIT, "rows (task, agent, model)")]
        | None = None,
    ) -> Annotated[CallToolResult, Summary]:
        """Tokens spent on a task (or this project), per task, per agent and per model, as
        the hooks reported them, with a dollar estimate (`usd_est`, list prices: a guess,
        not a bill). Use it to see what a task has cost so far before going on."""
        call = methods_usage.cost(
            task_id=task_id, agent=agent, model=model, since=since, until=until, limit=limit
        )
        try:
            answered = await bridge.link.request(bridge.fill(call, ctx))
        except CoordError as exc:
            return results.refusal(exc)
        table, _ = prices.load(bridge.project.value)
        summary = cost_report.summarize(msgspec.convert(answered, CostResult), table)
        return results.answer(msgspec.to_builtins(summary))

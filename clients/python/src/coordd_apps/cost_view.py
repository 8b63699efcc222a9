"""Cost so far, per task and per agent, for the watching surfaces (`coord top`, `coord
web`; issue 48): one `cost.query` summed by task and by agent, the budgets it carries,
and the compact cells they show. Token counts are the ledger's facts; a dollar figure
is `prices.py`'s estimate and always carries "est.". No Textual and no HTTP here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from coordd_apps import prices
from coordd_apps.cost_report import ESTIMATE
from coordd_client.client import Client
from coordd_wire.wire_usage import CostResult

K = TypeVar("K", int, str)
#: One query's rows at most: a board's (task, agent, model) triples; past it the sums
#: are of the rows read and `more` says so.
ROWS = 10000
#: A budget's marks: `!` from 80% spent, `!!` from 100%.
WARN, OVER = 0.8, 1.0


@dataclass
class Costs:
    """Tokens (all four kinds) and the dollar estimate, per task and per agent."""

    tasks: dict[int, int] = field(default_factory=dict)
    agents: dict[str, int] = field(default_factory=dict)
    #: USD estimates; None where a model charged there has no price.
    task_usd: dict[int, float | None] = field(default_factory=dict)
    agent_usd: dict[str, float | None] = field(default_factory=dict)
    #: Token budgets of the tasks charged, by task.
    budgets: dict[int, int] = field(default_factory=dict)
    #: The query had more rows than it read: the sums are short.
    more: bool = False


def summed(result: CostResult, table: prices.Prices) -> Costs:
    costs = Costs(more=result.more)
    for row in result.rows:
        usd = prices.estimate(table, row.model, (row.input, row.output, row.cache_creation,
                                                 row.cache_read))  # fmt: skip
        if row.task_id is not None:
            costs.tasks[row.task_id] = costs.tasks.get(row.task_id, 0) + row.total
            _add_usd(costs.task_usd, row.task_id, usd)
        costs.agents[row.agent] = costs.agents.get(row.agent, 0) + row.total
        _add_usd(costs.agent_usd, row.agent, usd)
    costs.budgets = {b.task_id: b.tokens for b in result.budgets}
    return costs


def _add_usd(sums: dict[K, float | None], key: K, usd: float | None) -> None:
    was = sums.get(key, 0.0)
    sums[key] = None if was is None or usd is None else was + usd


def read(client: Client, project: str | None) -> Costs | None:
    """One `cost.query` for the project (every project: None), summed; None from a daemon
    without the ledger."""
    if not client.supports("token_ledger"):
        return None
    table, _ = prices.load(project)
    return summed(client.cost(project=project, limit=ROWS), table)


def compact(n: int) -> str:
    """Tokens in four characters or so: 812, 45k, 1.2M, 12M, 1.5G (999,999 is 1M)."""
    if n < 1000:
        return str(n)
    for size, unit in ((1000, "k"), (1_000_000, "M"), (1_000_000_000, "G")):
        value = n / size
        text = f"{value:.1f}" if value < 9.95 else f"{value:.0f}"
        if float(text) < 1000 or unit == "G":
            break
    return text.removesuffix(".0") + unit


def level(spent: int, budget: int | None) -> int:
    """0 under 80% of the budget (or none), 1 from 80%, 2 from 100%."""
    if not budget:
        return 0
    return 2 if spent >= OVER * budget else 1 if spent >= WARN * budget else 0


def cell(spent: int, budget: int | None) -> str:
    """The cost column's text: `1.2M`, or `1.7M/2M!` against a budget (`!` from 80%,
    `!!` from 100%); empty when nothing was charged and there is no budget."""
    if not budget:
        return compact(spent) if spent else ""
    return f"{compact(spent)}/{compact(budget)}" + "!" * level(spent, budget)


def title_mark(spent: int, budget: int | None) -> str:
    """The budget's mark where a board has no room for the cost column: `!80%` from 80%
    spent, `!100%` from 100%; empty under 80% or without a budget."""
    return ("", "!80%", "!100%")[level(spent, budget)]


def usd(value: float | None) -> str:
    """A dollar estimate, labelled: `$1.23 est.`; `$? est.` when a model has no price."""
    return f"$? {ESTIMATE}" if value is None else f"${value:,.2f} {ESTIMATE}"


def task_words(costs: Costs, task_id: int) -> str:
    """A task's cost in words: `1,600,000 tokens (1.6M) · $4.80 est. · budget 2M: 80%`."""
    spent, budget = costs.tasks.get(task_id, 0), costs.budgets.get(task_id)
    words = f"{spent:,} tokens"
    if spent:
        words += f" ({compact(spent)}) · {usd(costs.task_usd.get(task_id))}"
    if budget:
        words += f" · budget {compact(budget)}: {100 * spent // budget}%"
    return words


def agent_words(costs: Costs, agent: str) -> str:
    """An agent's: `1.6M tokens · $4.80 est.`, or `-` when nothing was charged."""
    spent = costs.agents.get(agent, 0)
    if not spent:
        return "-"
    return f"{compact(spent)} tokens · {usd(costs.agent_usd.get(agent))}"

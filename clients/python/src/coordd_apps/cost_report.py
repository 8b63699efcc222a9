"""A ledger answer summed per task, per agent and per model, with the dollar estimate
(issue 48): the one shape `coord cost --json` and the MCP `task_cost` give, and the
table `coord cost` prints. Token counts are the ledger's; every dollar is labelled
`est.` (`prices.py` says why)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from coordd_apps import prices
from coordd_client.client import Client
from coordd_wire.wire_usage import CostResult, CostRow

Counts = tuple[int, int, int, int]
#: The label every dollar figure carries: it is a price table's guess, not a bill.
ESTIMATE = "est."


def _counts(row: CostRow) -> Counts:
    return (row.input, row.output, row.cache_creation, row.cache_read)


def _add(a: Counts, b: Counts) -> Counts:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3])


def summarize(result: CostResult, table: prices.Prices) -> dict[str, Any]:
    """{"by_task", "by_agent", "by_model", "totals", "usd_est", "unpriced", "more"}: each
    group a list of {key, input, output, cache_creation, cache_read, total, usd_est},
    largest first; `usd_est` None where a model of the group has no price."""
    unpriced = sorted(
        {row.model for row in result.rows if prices.price_of(table, row.model) is None}
    )

    def group(key: Callable[[CostRow], Any]) -> list[dict[str, Any]]:
        sums: dict[Any, tuple[Counts, float | None]] = {}
        for row in result.rows:
            counts, usd = sums.get(key(row), ((0, 0, 0, 0), 0.0))
            cost = prices.estimate(table, row.model, _counts(row))
            usd = None if usd is None or cost is None else usd + cost
            sums[key(row)] = (_add(counts, _counts(row)), usd)
        out = [_entry(k, counts, usd) for k, (counts, usd) in sums.items()]
        return sorted(out, key=lambda e: (-e["total"], str(e["key"])))

    by_model = group(lambda row: row.model)
    usd: float | None = 0.0
    for entry in by_model:
        usd = None if usd is None or entry["usd_est"] is None else usd + entry["usd_est"]
    t = result.totals
    return {
        "by_task": group(lambda row: row.task_id),
        "by_agent": group(lambda row: row.agent),
        "by_model": by_model,
        "totals": _entry(None, (t.input, t.output, t.cache_creation, t.cache_read), usd),
        "unpriced": unpriced,
        "more": result.more,
        "budgets": [
            {
                "task_id": b.task_id,
                "tokens": b.tokens,
                "spent": b.spent,
                "percent": round(100 * b.spent / b.tokens, 1),
            }
            for b in result.budgets
        ],
    }


def _entry(key: Any, counts: Counts, usd: float | None) -> dict[str, Any]:
    return {
        "key": key,
        **dict(zip(prices.KINDS, counts, strict=True)),
        "total": sum(counts),
        "usd_est": None if usd is None else round(usd, 4),
    }


def tokens(n: int) -> str:
    """A count the way people read them: 812, 45.3k, 2.10M."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.2f}M"


def dollars(usd: float | None) -> str:
    return "?" if usd is None else f"${usd:,.2f} {ESTIMATE}"


def table(title: str, entries: Sequence[dict[str, Any]], name: Callable[[Any], str]) -> str:
    """One group as aligned text: the key, each kind, the total and the estimate."""
    head = [title, "INPUT", "OUTPUT", "CACHE-W", "CACHE-R", "TOTAL", "USD"]
    rows = [
        [name(e["key"]), *(tokens(e[k]) for k in (*prices.KINDS, "total")), dollars(e["usd_est"])]
        for e in entries
    ]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    lines = ["  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in
                       enumerate(zip(r, widths, strict=True))) for r in [head, *rows]]  # fmt: skip
    return "\n".join(line.rstrip() for line in lines)


def task_costs(client: Client, *, project: str | None, task_id: int | None) -> dict[int, str]:
    """{task: its tokens in words}, from one `cost.query` (issue 48): facts only, no
    dollars (an estimate has no place in an audit trail); {} from a daemon without
    the ledger."""
    if not client.supports("token_ledger"):
        return {}
    answer = client.cost(project=project, task_id=task_id, limit=10000)
    sums: dict[int, list[int]] = {}
    for row in answer.rows:
        if row.task_id is not None:
            kinds = sums.setdefault(row.task_id, [0, 0, 0, 0])
            for index, count in enumerate((row.input, row.output, row.cache_creation,
                                           row.cache_read)):  # fmt: skip
                kinds[index] += count
    budgets = {budget.task_id: budget.tokens for budget in answer.budgets}
    for task in budgets:
        sums.setdefault(task, [0, 0, 0, 0])  # a budget with nothing spent on it yet
    out: dict[int, str] = {}
    for task, (i, o, w, r) in sums.items():
        words = f"{tokens(i + o + w + r)} tokens (input {i}, output {o}, cache writes {w},"
        words += f" cache reads {r})"
        if task in budgets:
            words += f", budget {tokens(budgets[task])}"
        out[task] = words
    return out

"""The cost cells `coord top` and `coord web` show (issue 48): compact token counts,
a budget's marks, and one `cost.query` summed per task and per agent."""

from __future__ import annotations

from coordd_apps import cost_view, prices
from coordd_wire.wire_usage import Budget, CostResult, CostRow, Tokens


def test_compact_counts() -> None:
    shown = [cost_view.compact(n) for n in (0, 812, 1000, 45_300, 999_999, 1_200_000,
                                            12_400_000, 1_500_000_000)]  # fmt: skip
    assert shown == ["0", "812", "1k", "45k", "1M", "1.2M", "12M", "1.5G"]


def test_a_budget_is_marked_from_80_and_from_100_percent() -> None:
    assert cost_view.cell(0, None) == ""
    assert cost_view.cell(1_200_000, None) == "1.2M"
    assert cost_view.cell(0, 2_000_000) == "0/2M"
    assert cost_view.cell(1_599_999, 2_000_000) == "1.6M/2M"
    assert cost_view.cell(1_600_000, 2_000_000) == "1.6M/2M!"
    assert cost_view.cell(2_000_000, 2_000_000) == "2M/2M!!"


def test_one_query_summed_per_task_and_agent_with_a_labelled_estimate() -> None:
    def row(task: int | None, agent: str, model: str, **n: int) -> CostRow:
        return CostRow(task_id=task, agent=agent, model=model, entries=1, **n)

    result = CostResult(
        rows=[
            row(3, "a", "claude-sonnet-4-5", input=1_000_000),
            row(3, "b", "gpt-5", output=100_000),
            row(None, "b", "mystery-1", output=5),
        ],
        totals=Tokens(input=1_000_000, output=100_005),
        budgets=[Budget(task_id=3, tokens=2_000_000, spent=1_100_000)],
    )
    costs = cost_view.summed(result, dict(prices.DEFAULT_PRICES))
    assert costs.tasks == {3: 1_100_000} and costs.budgets == {3: 2_000_000}
    assert costs.agents == {"a": 1_000_000, "b": 100_005}
    assert cost_view.usd(costs.task_usd[3]) == "$4.00 est."  # $3 + $1
    assert costs.agent_usd["b"] is None and cost_view.usd(None) == "$? est."  # unpriced

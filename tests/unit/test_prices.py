"""The price table a repository overrides in `.coord/config.json` (issue 48): a row
that cannot be read is left out and said, with what a row takes; a typo in a kind's
name is said too, not silently ignored (found by the new-user review)."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from coordd_apps import prices


def test_a_row_that_names_only_some_kinds_keeps_the_others() -> None:
    table = dict(prices.DEFAULT_PRICES)
    assert prices.merge(table, {"claude-sonnet-4": {"input": 1000}}) is None
    assert table["claude-sonnet-4"] == (1000.0, 15.0, 3.75, 0.3)


def test_a_misspelt_kind_is_said_and_the_row_left_out() -> None:
    table = dict(prices.DEFAULT_PRICES)
    problem = prices.merge(table, {"claude-sonnet-4": {"inputs": 1000}, "gpt-5": {"output": 1}})
    assert problem is not None
    assert "prices['claude-sonnet-4'] left out ('inputs' is no kind)" in problem
    assert "input, output, cache_creation, cache_read" in problem
    assert table["claude-sonnet-4"] == prices.DEFAULT_PRICES["claude-sonnet-4"]
    assert table["gpt-5"][1] == 1.0  # the good row is kept


def test_a_value_that_is_no_price_is_said() -> None:
    for bad in ("x", -1, True, None, [3]):
        table = dict(prices.DEFAULT_PRICES)
        problem = prices.merge(table, {"claude-sonnet-4": {"input": bad}})
        assert problem is not None and "a non-negative number" in problem, bad
        assert table["claude-sonnet-4"] == prices.DEFAULT_PRICES["claude-sonnet-4"]
    assert prices.merge({}, {"m": "cheap"}) is not None
    assert prices.merge({}, []) == "`prices` is not an object"


def test_coord_web_says_once_where_it_runs_why_it_uses_the_default_prices(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said nothing: a price table with a typo gave the default estimate silently."""
    from coordd_apps.web import daemon
    from coordd_wire.wire_usage import CostResult, Tokens

    class Ledger:
        async def supports(self, feature: str) -> bool:
            return True

        async def cost(self, **_: object) -> CostResult:
            return CostResult(rows=[], totals=Tokens(), budgets=[])

    (tmp_path / ".coord").mkdir()
    (tmp_path / ".coord" / "config.json").write_text('{"prices": {"gpt-5": {"inputs": 1}}}')
    for _ in range(2):
        trio.run(daemon.costs, Ledger(), str(tmp_path))  # type: ignore[arg-type]
    said = capsys.readouterr().err
    assert said.count("coord web: default prices used:") == 1
    assert "prices['gpt-5'] left out ('inputs' is no kind)" in said

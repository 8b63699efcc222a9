"""layout.pane_columns: the side panes of `coord top` fit the terminal (issue 47 item 7)."""

from __future__ import annotations

import pytest

from coordd_apps.tui import layout

PANES = [
    (layout.RESERVATION_COLUMNS, "PATTERN"),
    (layout.MESSAGE_COLUMNS, "MESSAGE"),
    (layout.AGENT_COLUMNS, "HOLDS"),
]


@pytest.mark.parametrize("width", [80, 90, 100, 120, 200])
@pytest.mark.parametrize(("wanted", "rest"), PANES)
def test_every_column_fits_the_width_at_its_least_or_more(
    width: int, wanted: tuple[layout.Column, ...], rest: str
) -> None:
    chosen = layout.pane_columns(width, wanted, rest)
    assert [name for name, _ in chosen] == [c.name for c in wanted]
    used = sum(cells + layout.PADDING for _, cells in chosen) + layout.SCROLLBAR
    assert used == width  # no sideways scrolling, no room wasted
    for column, (_, cells) in zip(wanted, chosen, strict=True):
        assert cells >= column.least
        if column.name != rest:
            assert cells <= column.width


def test_the_rest_keeps_its_floor_and_the_others_grow_first() -> None:
    at_80 = dict(layout.pane_columns(80, layout.MESSAGE_COLUMNS, "MESSAGE"))
    assert at_80["MESSAGE"] == 27 and at_80["FROM"] == 12  # the body first at 80
    at_120 = dict(layout.pane_columns(120, layout.MESSAGE_COLUMNS, "MESSAGE"))
    assert at_120["FROM"] == 20 and at_120["KIND"] == 16 and at_120["MESSAGE"] == 53


def test_a_cost_cell_and_its_budget_marks_fit_the_cost_column() -> None:
    """Found by the new-user review of issue 48: `510k/500k!!` was cut to `510k/500k`
    in a 9-wide COST column, losing the marks that say a budget is spent."""
    from coordd_apps import cost_view

    width = {c.name: c.width for c in layout.OPTIONAL}["COST"]
    agents = {c.name: c.width for c in layout.AGENT_COLUMNS}["COST"]
    for budget in (1, 999, 500_000, 999_999, 1_500_000, 999_000_000, 1_500_000_000):
        for spent in (0, budget * 8 // 10, budget, budget * 3):
            assert len(cost_view.cell(spent, budget)) <= width, (spent, budget)
            assert len(cost_view.compact(spent)) <= agents
    assert cost_view.cell(510_000, 500_000) == "510k/500k!!"

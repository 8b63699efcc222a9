"""What `coord post --budget` and `coord cost --since` take, and how they refuse what
they cannot read (issue 48): a clear error naming the forms, never a traceback."""

from __future__ import annotations

import argparse

import pytest

from coordd_apps.cli.arguments import tokens
from coordd_apps.cli.cost import instant


def test_a_token_count_as_people_write_one() -> None:
    assert [tokens(t) for t in ("2M", "2m", "2000000", "500k", "1.5k", "1e3", "2G")] == [
        2_000_000, 2_000_000, 2_000_000, 500_000, 1500, 1000, 2_000_000_000,
    ]  # fmt: skip


@pytest.mark.parametrize("text", ["", " ", "abc", "nan", "inf", "-inf", "k", "M"])
def test_what_is_no_token_count_is_refused_with_the_forms(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="is not a token count"):
        tokens(text)


@pytest.mark.parametrize("text", ["0", "-1", "0.4"])
def test_a_budget_is_at_least_one_token(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="at least 1 token"):
        tokens(text)


@pytest.mark.parametrize("text", ["xyz", "-2h", "1y", ""])
def test_what_is_no_time_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        instant(text)

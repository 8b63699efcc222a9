"""Dollars as an estimate (issue 48): token counts are facts, a price is a guess.

The ledger holds tokens only. A surface that shows money multiplies them by a price
per million tokens from this table, by the longest model-name prefix that matches,
and labels the result "est.": list prices change, discounts and batch rates exist,
and a subscription is not billed per token at all. A repository overrides or adds
rows in its `.coord/config.json`:

    {"prices": {"claude-sonnet-4": {"input": 3, "output": 15, "cache_creation": 3.75,
                                    "cache_read": 0.3}}}

(USD per million tokens; a row names all four kinds or the kinds it changes). A
model no row matches has no estimate (shown as `?`), never a made-up one.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: (input, output, cache_creation, cache_read) in USD per million tokens: the list
#: prices the vendors published for these families in 2025, as far as the author
#: knew them, not checked against a live price page; override them with yours.
DEFAULT_PRICES: dict[str, tuple[float, float, float, float]] = {
    "claude-opus-4-5": (5.0, 25.0, 6.25, 0.5),
    "claude-opus-4": (15.0, 75.0, 18.75, 1.5),
    "claude-sonnet-4": (3.0, 15.0, 3.75, 0.3),
    "claude-haiku-4": (1.0, 5.0, 1.25, 0.1),
    "claude-3-5-haiku": (0.8, 4.0, 1.0, 0.08),
    "gpt-5-mini": (0.25, 2.0, 0.0, 0.025),
    "gpt-5": (1.25, 10.0, 0.0, 0.125),
}
KINDS = ("input", "output", "cache_creation", "cache_read")
CONFIG_FILE = Path(".coord") / "config.json"
#: A price table is a few rows; a config file larger than this is not read for prices.
CONFIG_BYTES = 65536

Prices = dict[str, tuple[float, float, float, float]]


def load(project: str | None) -> tuple[Prices, str | None]:
    """The default table with the repository's `prices` merged over it, and why the
    repository's were not used when they could not be (None: used, or none given)."""
    table = dict(DEFAULT_PRICES)
    if not project:
        return table, None
    path = Path(project) / CONFIG_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return table, None
    except OSError as exc:
        return table, f"{path} cannot be read ({exc.strerror})"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return table, f"{path} is not a regular file"
        raw = os.read(fd, CONFIG_BYTES + 1)
    finally:
        os.close(fd)
    try:
        config = json.loads(raw) if len(raw) <= CONFIG_BYTES else None
    except ValueError:
        return table, f"{path} is not JSON"
    given = config.get("prices") if isinstance(config, dict) else None
    if given is None:
        return table, None
    problem = merge(table, given)
    return table, None if problem is None else f"{path}: {problem}"


def merge(table: Prices, given: Any) -> str | None:
    """`given` (`{"model prefix": {"input": usd_per_mtok, ...}}`) merged into `table`;
    what was wrong with it, if anything (the rows that were right are kept)."""
    if not isinstance(given, Mapping):
        return "`prices` is not an object"
    problem = None
    for prefix, row in given.items():
        base = table.get(prefix, (0.0, 0.0, 0.0, 0.0))
        unknown = sorted(set(row) - set(KINDS)) if isinstance(row, Mapping) else []
        if (
            not isinstance(row, Mapping)
            or unknown
            or any(
                isinstance(row.get(kind, 0), bool)
                or not isinstance(row.get(kind, 0), int | float)
                or row.get(kind, 0) < 0
                for kind in KINDS
            )
        ):
            said = f" ({', '.join(map(repr, unknown))} is no kind)" if unknown else ""
            problem = (
                f"prices[{prefix!r}] left out{said}: give"
                f" {{{', '.join(KINDS)}}} (any of them), each a non-negative number,"
                " USD per million tokens"
            )
            continue
        table[str(prefix)] = tuple(  # type: ignore[assignment]
            float(row.get(kind, base[index])) for index, kind in enumerate(KINDS)
        )
    return problem


def price_of(table: Prices, model: str) -> tuple[float, float, float, float] | None:
    """The row of the longest prefix of `model` in `table`, if any."""
    best = max((prefix for prefix in table if model.startswith(prefix)), key=len, default=None)
    return None if best is None else table[best]


def estimate(table: Prices, model: str, counts: tuple[int, int, int, int]) -> float | None:
    """USD for `counts` (input, output, cache_creation, cache_read) of `model`, or None."""
    row = price_of(table, model)
    if row is None:
        return None
    return sum(count * price for count, price in zip(counts, row, strict=True)) / 1_000_000

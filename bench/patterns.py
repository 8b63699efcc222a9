"""What one reservation pattern can cost against one path: the worst the bounds allow.

`python -m bench.patterns` times `Pattern.covers` for the slowest pattern a new
reservation may hold (1,024 characters, 16 wildcards of which 4 are `**`
segments, shaped to keep every position alive) against the longest path a
check takes (4,096 characters, 2,048 segments), and a plain literal pattern
against the same path, and prints both and their ratio. It also times the
shapes of issue 29 that held pathspec for seconds to minutes (allowed or
not: a stored one must not hang either), and a cyclic scan of more distinct
live patterns than the parse cache holds.
"""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable

from coordd_wire.patterns import (
    MAX_PATTERN_CHARS,
    MAX_PATTERN_GLOBSTARS,
    MAX_PATTERN_WILDCARDS,
    PARSED,
    check_bounds,
    parse,
)
from coordd_wire.wildmatch import PathBits

LONGEST_PATH = 4096


def _us(action: Callable[[], object], repeat: int = 50) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1e6


def worst_allowed() -> str:
    """`**` segments and `*a` stars up to the bounds, then a literal tail of `/a` that
    occurs at every other position of the path (one `find` each), to the longest."""
    stars = MAX_PATTERN_WILDCARDS - MAX_PATTERN_GLOBSTARS
    head = "a/**/" * MAX_PATTERN_GLOBSTARS + "*a" * stars
    return head + "/a" * ((MAX_PATTERN_CHARS - len(head)) // 2)


def main() -> None:
    path = ("a/" * (LONGEST_PATH // 2))[:-1] + "a"
    worst = parse(worst_allowed())
    check_bounds(worst)  # allowed
    literal = parse("src/app/main.py")
    long_literal = parse("a/" * 511 + "b")
    print(f"path: {len(path)} characters, {path.count('/') + 1} segments")
    cold_worst = _us(lambda: worst.covers(path))
    cold_literal = _us(lambda: literal.covers(path))
    cold_long = _us(lambda: long_literal.covers(path))
    bits = PathBits(path)
    worst.covers_bits(bits)
    warm_worst = _us(lambda: worst.covers_bits(bits))
    print(f"worst allowed ({len(worst.text)} chars, {worst.wildcards} wildcards,"
          f" {worst.globstars} `**`): {cold_worst:,.0f} us"
          f" (path prepared once: {warm_worst:,.0f} us)")  # fmt: skip
    print(f"literal {literal.text!r}: {cold_literal:,.2f} us;"
          f" 1,023-char literal: {cold_long:,.2f} us")  # fmt: skip
    print(f"ratio worst/literal: {cold_worst / cold_literal:,.0f}x;"
          f" worst/1,023-char literal: {cold_worst / cold_long:,.0f}x")  # fmt: skip
    for name, text, deep in [
        ("issue 29 poison", "node_modules/" + "**/*/" * 10 + "zzz",
         "node_modules/" + "/".join(["d"] * 2000)),
        ("*a x12 + *b", "*a" * 12 + "*b", "a" * LONGEST_PATH),
        ("a/**/ x8 + x", "a/**/" * 8 + "x", ("a/" * (LONGEST_PATH // 2))[:-1]),
    ]:  # fmt: skip
        pattern = parse(text)
        print(f"{name} (stored, over the bounds) vs {len(deep)} chars:"
              f" {_us(functools.partial(pattern.covers, deep)):,.0f} us")  # fmt: skip
    for live in (4_000, 5_000, 20_000, 50_000):
        texts = [f"**/gen{n}/*.py" for n in range(live)]
        for text in texts:
            parse(text)
        PARSED.hits = PARSED.misses = 0
        bits = PathBits("src/app/gen7/x.py")
        started = time.perf_counter()
        for text in texts:
            parse(text).covers_bits(bits)
        elapsed = time.perf_counter() - started
        print(f"{live:,} live wildcard patterns, one path checked against all:"
              f" {elapsed * 1e3:,.0f} ms, cache hits {PARSED.hits / live:.0%}")  # fmt: skip


if __name__ == "__main__":
    main()

"""Reservation patterns: validation, coverage, and the overlap test against brute force.

The brute force enumerates every path up to a depth over a small alphabet
of names and asks `pathspec` whether both patterns cover it. The alphabet
holds a witness for every generated glob segment, so for a literal pattern
the brute force finds a common path whenever one exists: there the
daemon's answer must equal it. For two wildcard patterns the daemon may be
conservative, never optimistic, and must see the disjointness the protocol
names.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordd_wire.patterns import (
    MAX_PREFIX_CHARS,
    BadPattern,
    ParsedCache,
    Pattern,
    candidate_prefixes,
    check_bounds,
    overlap,
    parse,
    relative_path,
)

NAMES = ("a", "b", "ab", "x")
GLOBS = ("a", "b", "ab", "*", "a*", "?", "[ab]", "[!a]", "**", "*b")
LITERALS = ("a", "b", "ab")

UNIVERSE = [
    "/".join(names) for depth in range(1, 6) for names in itertools.product(NAMES, repeat=depth)
]


def brute_overlap(a: Pattern, b: Pattern) -> bool:
    return any(a.covers(path) and b.covers(path) for path in UNIVERSE)


def build(segments: list[str], trailing_slash: bool) -> Pattern:
    return parse("/".join(segments) + ("/" if trailing_slash else ""))


wild_patterns = st.builds(
    build, st.lists(st.sampled_from(GLOBS), min_size=1, max_size=3), st.booleans()
)
literal_patterns = st.builds(
    build, st.lists(st.sampled_from(LITERALS), min_size=1, max_size=2), st.booleans()
)


@settings(max_examples=300, deadline=None)
@given(literal_patterns, wild_patterns)
def test_overlap_with_a_literal_pattern_is_exact(literal: Pattern, other: Pattern) -> None:
    expected = brute_overlap(literal, other)
    assert overlap(literal, other) == expected
    assert overlap(other, literal) == expected


@settings(max_examples=300, deadline=None)
@given(wild_patterns, wild_patterns)
def test_overlap_of_two_wildcard_patterns_is_never_optimistic(a: Pattern, b: Pattern) -> None:
    if brute_overlap(a, b):
        assert overlap(a, b) and overlap(b, a)


@settings(max_examples=200, deadline=None)
@given(wild_patterns, wild_patterns)
def test_literal_segments_that_differ_before_a_wildcard_are_disjoint(
    a: Pattern, b: Pattern
) -> None:
    shared = min(a.literal_count, b.literal_count)
    differ = any(x != y for x, y in zip(a.segments[:shared], b.segments[:shared], strict=True))
    if differ:
        assert not overlap(a, b)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        # PROTOCOL.md section 10's own examples.
        ("src/a/**", "src/b/*.py", False),
        ("src/*.py", "src/**", True),
        ("src/**", "src/b/*.py", True),
        ("src/auth", "src/auth/login.py", True),
        ("src/auth/", "src/auth/login.py", True),
        ("src/*", "src/x/y.txt", True),
        ("src/auth", "src/authz", False),
        ("docs/**", "src/*.py", False),
        ("**/*.py", "src/x.py", True),
        # src/x.md may be a directory: src/x.md/a.py is covered by both.
        ("**/*.py", "src/x.md", True),
        ("**/*.py/", "src/x.md", True),
        ("*/*.py", "src", True),
        # `src/*.py` covers only what lies under a name ending in .py; src/x is not one.
        ("src/*.py", "src/x/y.md", False),
    ],
)
def test_overlap_examples(a: str, b: str, expected: bool) -> None:
    assert overlap(parse(a), parse(b)) == expected
    assert overlap(parse(b), parse(a)) == expected


def test_coverage_follows_gitignore() -> None:
    assert parse("src/auth").covers("src/auth/login.py")
    assert parse("src/auth/").covers("src/auth/login.py")
    assert parse("src/*").covers("src/x/y.txt")
    assert parse("src/**").covers("src/x")
    assert not parse("src/**").covers("src")
    assert not parse("src/auth").covers("lib/src/auth")  # anchored at the root
    assert parse("a\\*").covers("a*") and not parse("a\\*").covers("ab")
    assert parse("name ").covers("name ") and not parse("name ").covers("name")


@pytest.mark.parametrize(
    "bad",
    ["", "/abs", "!neg", "a//b", "./a", "a/./b", "a/..", "../x", "[", "x" * 1025, "[z-a]"],
)
def test_bad_patterns_are_refused_with_a_reason(bad: str) -> None:
    with pytest.raises(BadPattern) as caught:
        parse(bad)
    assert str(caught.value)


def test_new_patterns_are_bounded_in_wildcards_and_double_stars() -> None:
    check_bounds(parse("src/**/*.test.[jt]s"))
    check_bounds(parse("a/**/b/**/c/**/d/**"))  # 4 `**`
    check_bounds(parse("*" * 16))
    for bad, limit in [
        ("node_modules/" + "**/*/" * 10 + "zzz", "at most 4"),
        ("a/**/" * 5 + "x", "at most 4"),
        ("*a" * 17, "at most 16"),
        ("[ab]?" * 9, "at most 16"),
    ]:
        pattern = parse(bad)  # syntax is fine: a stored one still parses and matches
        with pytest.raises(BadPattern, match=limit):
            check_bounds(pattern)
    assert parse("\\*" * 20).wildcards == 0  # escaped


def test_the_parse_cache_keeps_a_share_of_a_cyclic_scan_larger_than_itself() -> None:
    """An LRU misses on every look of a cyclic scan larger than itself (issue 29, item 5)."""
    cache = ParsedCache(100)
    texts = [f"**/gen{n}/*.py" for n in range(150)]
    for _ in range(5):
        for text in texts:
            if cache.get(text) is None:
                cache.put(parse(text))
    assert len(cache) == 100
    assert cache.hits > 150  # an LRU would have none


def test_prefix_is_the_literal_leading_segments() -> None:
    assert parse("src/auth/*.py").prefix == "src/auth/"
    assert parse("src/auth").prefix == "src/auth/"
    assert parse("src/auth/").prefix == "src/auth/"
    assert parse("**/x").prefix == ""
    assert parse("a\\*b/c*").prefix == "a*b/"


def test_every_covering_pattern_has_a_candidate_prefix() -> None:
    """The index lookup misses nothing: a covering pattern's prefix is among the path's keys."""
    for text in ("src/auth", "src/*", "src/a/**", "**/x", "src/auth/login.py", "src/a/b/"):
        pattern = parse(text)
        for path in ("src/auth/login.py", "src/a/b/c", "src/x", "x"):
            if pattern.covers(path):
                assert pattern.prefix in candidate_prefixes(path)


def _joined_prefixes(path: str) -> list[str]:
    """The keys as they were first built: each run of segments joined anew (quadratic)."""
    segments = path.split("/")
    return [""] + ["".join(s + "/" for s in segments[: n + 1]) for n in range(len(segments))]


@given(
    st.lists(st.sampled_from(["a", "bb", "c" * 9, "d" * 300]), min_size=1, max_size=40),
    st.integers(min_value=1, max_value=MAX_PREFIX_CHARS + 9),
)
def test_the_keys_are_every_key_a_pattern_can_have(segments: list[str], cut: int) -> None:
    """The same keys as before, less those longer than any pattern's prefix can be."""
    path = "/".join(segments)[:cut].rstrip("/")
    if path:
        expected = [k for k in _joined_prefixes(path) if len(k) <= MAX_PREFIX_CHARS]
        assert candidate_prefixes(path) == expected
    assert parse("a/" * 511 + "bc").prefix in candidate_prefixes("a/" * 511 + "bc/d/e")


def _best_of(action: Callable[[], object], rounds: int = 7) -> float:
    """The fastest of `rounds` runs: the least disturbed by a loaded machine."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def test_preparing_a_deep_path_is_linear_not_quadratic() -> None:
    """Issue 44: 2,048 segments took 0.2 s (each run of segments joined anew), 4x the
    time of 1,024. Now twice the depth costs at most about twice the time (a ratio, not
    an absolute time), and the keys stop at the longest a pattern's prefix can be."""
    shallow, deep = "/".join(["a"] * 1024), "/".join(["a"] * 2048)
    ratio = _best_of(lambda: candidate_prefixes(deep)) / _best_of(
        lambda: candidate_prefixes(shallow)
    )
    assert ratio < 2.5, f"depth 2,048 / depth 1,024 took {ratio:.1f}x"
    keys = candidate_prefixes(deep)
    assert len(keys) <= MAX_PREFIX_CHARS // 2 + 1
    assert max(map(len, keys)) <= MAX_PREFIX_CHARS


def test_paths_are_made_relative_to_the_project() -> None:
    assert relative_path("src/a.py", "/repo") == "src/a.py"
    assert relative_path("/repo/src/a.py", "/repo") == "src/a.py"
    for bad in ("/elsewhere/a.py", "/repo", "/repo/", "a//b", "./a", "a/../b", ""):
        with pytest.raises(BadPattern):
            relative_path(bad, "/repo")

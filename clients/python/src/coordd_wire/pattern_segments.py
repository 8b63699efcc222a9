"""One segment of a reservation pattern: its wildcards, and the search for overlaps.

patterns.py parses a pattern into segments and decides whether two patterns
overlap; the work on segments that decision needs lives here: whether a
segment holds a wildcard, its literal text, whether some name matches a glob,
and the two searches (a literal path against any pattern, exactly; two
wildcard patterns, conservatively) that patterns.py's docstring describes.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from coordd_wire.wildmatch import Matcher, compile_pattern

_WILDCARDS = frozenset("*?[")
DOUBLE_STAR = "**"


def wildcard_count(segment: str) -> int:
    """Unescaped `*`, `?` and `[` in one segment (what the bounds count)."""
    count, escaped = 0, False
    for char in segment:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in _WILDCARDS:
            count += 1
    return count


def has_wildcard(segment: str) -> bool:
    """An unescaped `*`, `?` or `[` (a backslash makes the next character literal)."""
    return wildcard_count(segment) > 0


def unescape(segment: str) -> str:
    """A literal segment's text: backslash escapes removed."""
    out, escaped = [], False
    for char in segment:
        if char == "\\" and not escaped:
            escaped = True
            continue
        out.append(char)
        escaped = False
    return "".join(out)


def aligned_segments_agree(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Two wildcard patterns, conservatively: until either reaches a `**`, segment i of
    one and segment i of the other name the same path segment, so a literal one that
    the other's glob does not match (or two literal ones that differ) proves them
    disjoint. Two globs, a `**`, or one pattern ending (it covers all below) may agree."""
    for x, y in zip(a, b, strict=False):
        if DOUBLE_STAR in (x, y):
            return True
        x_literal, y_literal = not has_wildcard(x), not has_wildcard(y)
        if x_literal and y_literal:
            if unescape(x) != unescape(y):
                return False
        elif x_literal:
            if not _segment_matches(y, unescape(x)):
                return False
        elif y_literal and not _segment_matches(x, unescape(y)):
            return False
    return True


#: Segment globs (`*.py`) recur across patterns: few distinct ones, each cheap to compile.
_glob = functools.lru_cache(maxsize=4096)(compile_pattern)


def _segment_matches(glob: str, name: str) -> bool:
    return _glob(glob).matches(name)


@functools.lru_cache(maxsize=4096)
def _satisfiable(glob: str) -> bool:
    """Does some segment name match `glob`? Tried on names built from the glob itself."""
    return any(_segment_matches(glob, name) for name in _witness_names(glob))


#: Characters tried for a `[...]` class after its own ones (a negated class needs others).
_CLASS_FALLBACK = "x0_-.Z~ "


def _witness_names(glob: str) -> list[str]:
    """Names likely to match `glob`, in time linear in its length: `?` as `x`, `*` as
    nothing or `x`, each `[...]` as the first character that class matches alone."""
    pieces: list[str | None] = []  # None stands for `*`
    index = 0
    while index < len(glob):
        char = glob[index]
        if char == "\\" and index + 1 < len(glob):
            pieces.append(glob[index + 1])
            index += 2
        elif char == "*":
            pieces.append(None)
            index += 1
        elif char == "?":
            pieces.append("x")
            index += 1
        elif char == "[" and (end := _class_end(glob, index)) != -1:
            klass = glob[index : end + 1]
            inside = klass[1:-1]
            chosen = next(
                (
                    c
                    for c in dict.fromkeys(inside + _CLASS_FALLBACK)
                    if c not in "/\\" and _segment_matches(klass, c)
                ),
                None,
            )
            if chosen is None:
                return []
            pieces.append(chosen)
            index = end + 1
        else:
            pieces.append(char)
            index += 1
    return ["".join(star if piece is None else piece for piece in pieces) for star in ("", "x")]


def _class_end(glob: str, start: int) -> int:
    """The index of the `]` closing the class opened at `start`, or -1."""
    index = start + 1
    if index < len(glob) and glob[index] in "!^":
        index += 1
    if index < len(glob) and glob[index] == "]":
        index += 1  # a `]` first in the class is one of its characters
    return glob.find("]", index)


@dataclass(frozen=True)
class SegmentSearch:
    """A pattern's segments as `covers_under` needs them, built once per pattern.

    Per call, the search compiled each segment glob and asked whether each rest
    could match, through caches of 4,096 entries: a scan over more distinct live
    patterns than that missed on every look (issue 44: 10,000 wildcard
    reservations made one 16-path `file.guard` cost 7.7 s). A parsed pattern
    now keeps its own (`Pattern.search`), in the shared parse cache.
    """

    #: The segments, consecutive `**` as one.
    segments: tuple[str, ...]
    #: Each segment's matcher (None for `**`).
    matchers: tuple[Matcher | None, ...]
    #: rest_ok[i]: can segments[i:] match one or more freely chosen segments?
    rest_ok: tuple[bool, ...]


def segment_search(pattern: tuple[str, ...]) -> SegmentSearch:
    """`pattern`'s segments, prepared for `covers_under`."""
    segments = _collapse(pattern)
    matchers = tuple(None if s == DOUBLE_STAR else _glob(s) for s in segments)
    all_ok = [True] * (len(segments) + 1)
    for i in range(len(segments) - 1, -1, -1):
        segment = segments[i]
        all_ok[i] = all_ok[i + 1] and (segment == DOUBLE_STAR or _satisfiable(segment))
    # Nothing left to match below the literal path: handled as a leading run.
    rest_ok = (*all_ok[:-1], False)
    return SegmentSearch(segments, matchers, rest_ok)


def covers_under(search: SegmentSearch, target: tuple[str, ...]) -> bool:
    """Does the pattern `search` was made from cover some path at or under the path
    `target` (a literal pattern's segments, unescaped)?

    It does when it matches one of that path's leading runs of segments
    (then everything under it is covered), or matches a path that goes on
    below it (then the literal pattern covers that path). A search over
    (pattern segment, literal segment) positions; `**` may absorb literal
    segments, and past the end of the literal path every segment is free.
    """
    segments, matchers = search.segments, search.matchers
    seen: set[tuple[int, int]] = set()
    stack = [(0, 0)]
    while stack:
        i, j = stack.pop()
        if (i, j) in seen:
            continue
        seen.add((i, j))
        if i == len(segments):
            if j > 0:  # matched a leading run of the literal path (or all of it)
                return True
            continue
        if j == len(target):
            # The literal path is used up: the rest must match segments below it.
            if search.rest_ok[i]:
                return True
            continue
        matcher = matchers[i]
        if matcher is None:
            if i == len(segments) - 1 and i > 0:
                # A trailing `/**` covers everything below what came before it.
                return True
            stack.append((i + 1, j))  # absorbs nothing
            stack.append((i, j + 1))  # absorbs one more literal segment
        elif matcher.matches(target[j]):
            stack.append((i + 1, j + 1))
    return False


def _collapse(segments: tuple[str, ...]) -> tuple[str, ...]:
    """Consecutive `**` segments mean what one does."""
    out: list[str] = []
    for segment in segments:
        if segment == DOUBLE_STAR and out and out[-1] == DOUBLE_STAR:
            continue
        out.append(segment)
    return tuple(out)

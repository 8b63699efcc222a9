"""Reservation patterns (PROTOCOL.md section 10): syntax, bounds, coverage, and overlap.

Matching a path is gitignore's wildmatch as `pathspec` decides it, with
every pattern anchored at the project root, done in linear time by
`coordd_wire.wildmatch` (pathspec's backtracking regexes let one pattern hold
the GIL for minutes: issue 29). A new pattern is also bounded in what it
may contain (`check_bounds`: wildcards and `**` segments), so the overlap
search below stays small; a pattern stored before the bounds existed is
still matched in linear time. What no library answers is whether two
*patterns* could cover a common path; that is decided here:

- When either pattern is literal (no wildcard), exactly: a segment-by-segment
  search for a path under the literal one that the other pattern covers,
  with the matcher deciding each segment. `tests/unit/test_patterns.py`
  checks it against brute force over generated path sets.
- When both have wildcards, conservatively, as the protocol allows: up to
  the first `**` in either, segments at the same position name the same
  path segment, so two literal ones that differ, or a literal one the other
  pattern's glob there does not match, prove them disjoint. That includes
  the protocol's rule (literal segments differing before either's first
  wildcard) and is never optimistic (property-tested).

The searches over segments live in `coordd_wire.pattern_segments`; this module
parses, bounds and caches patterns and chooses which search applies.

The database indexes each reservation by its literal prefix (the segments
before its first wildcard), so the candidates for a path or a pattern are
found by equality and range lookups rather than a scan.
"""

from __future__ import annotations

import functools
import random
import threading
from dataclasses import dataclass, field

from coordd_wire.pattern_segments import (
    DOUBLE_STAR,
    SegmentSearch,
    aligned_segments_agree,
    covers_under,
    has_wildcard,
    segment_search,
    unescape,
    wildcard_count,
)
from coordd_wire.wildmatch import Matcher, PathBits, Unmatchable, compile_pattern

MAX_PATTERN_CHARS = 1024
#: Wildcards (`*`, `?`, `[...]`; a `**` segment counts as one) a new pattern may
#: hold. Real patterns hold 1 to 4 (`src/**/*.test.[jt]s`); the bound keeps the
#: overlap search and a match's pieces few (docs/PROTOCOL-1.2.md, section 10a).
MAX_PATTERN_WILDCARDS = 16
#: `**` segments a new pattern may hold (`a/**/b/**/c` has 2).
MAX_PATTERN_GLOBSTARS = 4


class BadPattern(ValueError):
    """A pattern or a path the protocol refuses; the message says why."""


@dataclass(frozen=True)
class Pattern:
    """A validated pattern, split for the overlap test and the prefix index."""

    text: str
    #: Its segments, without the empty one a trailing `/` leaves.
    segments: tuple[str, ...]
    #: How many leading segments are literal (all of them for a literal pattern).
    literal_count: int
    #: The linear-time matcher, compiled once with the pattern.
    matcher: Matcher = field(repr=False, compare=False)

    @property
    def is_literal(self) -> bool:
        return self.literal_count == len(self.segments)

    @property
    def prefix(self) -> str:
        """The literal leading segments, each followed by `/`: the index key."""
        return "".join(unescape(s) + "/" for s in self.segments[: self.literal_count])

    def covers(self, path: str) -> bool:
        """gitignore coverage: the pattern matches `path` or one of its parent directories."""
        return self.matcher.matches(_normalised(path))

    def covers_bits(self, bits: PathBits) -> bool:
        """`covers` for a path prepared once (`PathBits`) and asked about by many patterns."""
        return self.matcher.matches_bits(bits)

    @functools.cached_property
    def search(self) -> SegmentSearch:
        """Its segments prepared for the overlap search, once per parsed pattern."""
        return segment_search(self.segments)

    @functools.cached_property
    def unescaped(self) -> tuple[str, ...]:
        """Its segments' literal text (what a literal pattern names)."""
        return tuple(unescape(s) for s in self.segments)

    @property
    def globstars(self) -> int:
        return sum(1 for segment in self.segments if segment == DOUBLE_STAR)

    @property
    def wildcards(self) -> int:
        """`*`, `?` and `[` not escaped, outside `**` segments; each `**` segment is one."""
        return self.globstars + sum(
            wildcard_count(segment) for segment in self.segments if segment != DOUBLE_STAR
        )


def _normalised(path: str) -> str:
    # As pathspec's match_file: a leading `/` or `./` is dropped (relative_path's
    # paths have neither).
    if path.startswith("/"):
        return path[1:]
    if path.startswith("./"):
        return path[2:]
    return path


def check_bounds(pattern: Pattern) -> None:
    """Refuse (`BadPattern`) a new pattern with more wildcards or `**` segments than allowed."""
    if pattern.globstars > MAX_PATTERN_GLOBSTARS:
        raise BadPattern(
            f"pattern {pattern.text!r} has {pattern.globstars} `**` segments: a pattern may"
            f" have at most {MAX_PATTERN_GLOBSTARS}"
        )
    if pattern.wildcards > MAX_PATTERN_WILDCARDS:
        raise BadPattern(
            f"pattern {pattern.text!r} has {pattern.wildcards} wildcards: a pattern may have"
            f" at most {MAX_PATTERN_WILDCARDS} (`*`, `?`, `[...]`; a `**` segment is one)"
        )


class ParsedCache:
    """Parsed patterns, at most `size` of them; when full, a new one replaces one at random.

    Not an LRU: the daemon's scans (every candidate reservation of a project,
    in id order, request after request) are cyclic, and an LRU smaller than
    the live set then misses on every look. Past 4,096 live patterns the old
    `lru_cache`s stopped working at once and one acquire held the writer for
    53 s (issue 29). Random replacement keeps a share of any working set, and
    lets the patterns of released reservations age out. A miss costs about
    30 us (a linear parse); a request also parses each candidate once whatever
    this holds (`store.reservations`). docs/PERFORMANCE.md has the figures.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.hits = 0
        self.misses = 0
        self._found: dict[str, Pattern] = {}
        self._keys: list[str] = []
        self._random = random.Random(0)  # not for secrets: which slot to reuse
        # Readers parse on worker threads: the dict and the list change together.
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._keys)

    def get(self, text: str) -> Pattern | None:
        found = self._found.get(text)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def put(self, pattern: Pattern) -> None:
        with self._lock:
            if pattern.text in self._found:
                return
            if len(self._keys) < self.size:
                self._keys.append(pattern.text)
            else:
                # At random: any fixed order (FIFO, or a permutation of the
                # slots) is as blind to a cyclic scan as an LRU.
                slot = self._random.randrange(self.size)
                del self._found[self._keys[slot]]
                self._keys[slot] = pattern.text
            self._found[pattern.text] = pattern


#: About 1 KB a pattern (4 KB for one of 1,024 characters): 16 to 64 MB at most.
PARSED = ParsedCache(16384)


def parse(text: str) -> Pattern:
    """Validate `text` as PROTOCOL.md section 10 says; raise `BadPattern` saying why.

    Syntax only: a stored pattern is parsed with this too. New ones are also
    held to `check_bounds`.
    """
    found = PARSED.get(text)
    if found is None:
        found = _parse(text)
        PARSED.put(found)
    return found


def _parse(text: str) -> Pattern:
    if not text:
        raise BadPattern("a pattern must not be empty")
    if len(text) > MAX_PATTERN_CHARS:
        raise BadPattern(f"a pattern is at most {MAX_PATTERN_CHARS} characters")
    if text.startswith("/"):
        raise BadPattern(
            f"pattern {text!r} is absolute: patterns are relative to the project root"
            " (drop the leading `/`)"
        )
    if text.startswith("!"):
        raise BadPattern(f"pattern {text!r} is a negation: `!` patterns are not allowed")
    body = text[:-1] if text.endswith("/") else text
    segments = tuple(body.split("/"))
    for segment in segments:
        if segment in ("", ".", ".."):
            raise BadPattern(
                f"pattern {text!r} has an empty, `.` or `..` segment: name paths inside"
                " the project, relative to its root"
            )
    try:
        matcher = compile_pattern(text)
    except Unmatchable as exc:
        raise BadPattern(f"pattern {text!r} is not valid wildmatch: {exc}") from None
    if matcher.discarded:
        raise BadPattern(f"pattern {text!r} is not valid wildmatch (an unclosed `[`?)")
    literal_count = next(
        (i for i, segment in enumerate(segments) if has_wildcard(segment)), len(segments)
    )
    return Pattern(text, segments, literal_count, matcher)


def relative_path(path: str, project: str) -> str:
    """A checked path, relative to the project root; raise `BadPattern` if it is not inside."""
    if path.startswith("/"):
        root = project.rstrip("/") + "/"
        if not path.startswith(root):
            raise BadPattern(
                f"path {path!r} is outside the project {project!r}: give paths inside it,"
                " relative to its root or absolute"
            )
        path = path[len(root) :]
    if not path:
        raise BadPattern("the project root itself cannot be checked: name a path inside it")
    for segment in path.split("/"):
        if segment in ("", ".", ".."):
            raise BadPattern(
                f"path {path!r} has an empty, `.` or `..` segment: give a normalised path"
            )
    return path


#: The longest index key a stored pattern can have: its literal segments, unescaped
#: (never longer), each followed by `/`, from a pattern of at most 1,024 characters.
MAX_PREFIX_CHARS = MAX_PATTERN_CHARS + 1


def candidate_prefixes(path: str) -> list[str]:
    """Every index key a pattern covering `path` can have: "" and each leading run of
    segments, each followed by `/`, up to the longest key a pattern can have.

    Sliced from the path at each `/` (one `str.find` each), and never longer than
    `MAX_PREFIX_CHARS`: a 2,048-segment path yields at most 513 keys of at most 1,025
    characters, not 2,049 keys joined segment by segment (quadratic: 0.2 s; issue 44).
    """
    keys = [""]
    end = path.find("/")
    while end != -1 and end < MAX_PREFIX_CHARS:
        keys.append(path[: end + 1])
        end = path.find("/", end + 1)
    if len(path) < MAX_PREFIX_CHARS:
        keys.append(path + "/")
    return keys


def prefix_upper_bound(prefix: str) -> str:
    """The first string after every string that starts with `prefix` (which ends in `/`)."""
    return prefix[:-1] + chr(ord("/") + 1)


def overlap(a: Pattern, b: Pattern) -> bool:
    """Could some path be covered by both? Exact when either is literal, else conservative."""
    if a.is_literal:
        return covers_under(b.search, a.unescaped)
    if b.is_literal:
        return covers_under(a.search, b.unescaped)
    return aligned_segments_agree(a.segments, b.segments)

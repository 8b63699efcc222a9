"""One anchored gitignore pattern, matched in linear time, deciding exactly as `pathspec` does.

`pathspec` (GitIgnoreSpecPattern) translates a pattern into a regular
expression and runs `re.search`. Python's `re` backtracks: `*a*a*a...b` or
`a/**/a/**/...x` against a long path take time exponential in the number of
wildcards, and `re` holds the GIL throughout, so one reservation pattern
could stall every thread of the daemon (issue 29). This module translates a
pattern into the *same* pieces, in the same way (the comments name the
`pathspec` code each step mirrors), and runs them as a bit-parallel NFA
(Shift-And): after each piece, the set of path positions the regex could
have reached is one Python int, and each piece is a few big-int operations
on it. A match costs O(pieces x len(path) / 64) machine-word operations,
whatever the pattern: no backtracking, no exponential case.

Exact means exact, quirks included, because the pieces are the regex's:

- `[!x]` becomes `[^x]`, which matches `/` too, so `a[!b]c` covers `a/c`;
- `**`'s `.+` does not match a newline, and `$` also matches before a
  path's final newline;
- the special cases `pathspec` gives `**`, `**/`, `*` and `*/` (a bare
  `re.search` for `.` or `/`).

A bracket expression is the one piece still handed to `re`, compiled on its
own: it matches one character, so it cannot backtrack.
`tests/unit/test_wildmatch.py` property-tests this module against `pathspec`.
"""

from __future__ import annotations

import functools
import re
import warnings
from dataclasses import dataclass

# Piece kinds. A piece is (kind, argument): a character, a bracket expression's
# regex text, or "".
_CHAR = 0  # given characters (argument: them; consecutive ones merged into one piece)
_ONE = 1  # `[^/]`: any one character but `/`
_CLASS = 2  # a bracket expression (argument: its one-character regex)
_STAR = 3  # `[^/]*`
_LEAD = 4  # `(?:.+/)?`: a leading `**`
_INNER = 5  # `(?:/.+)?`: a `**` between segments
_END = 6  # `(?:/|$)`: the end of a pattern that does not end in `**`

#: `pathspec`'s special cases (GitIgnoreSpecPattern.__normalize_segments): a bare
#: `re.search` for any character but a newline, or for a `/`.
_ANY_CHARACTER = "."
_ANY_SLASH = "/"


class Unmatchable(ValueError):
    """A pattern `pathspec` cannot compile; the message says why."""


@dataclass(frozen=True, slots=True)
class Matcher:
    """A compiled pattern: `matches(path)` is `pathspec`'s answer for that one pattern."""

    pieces: tuple[tuple[int, str], ...]
    #: `.` or `/`: `pathspec`'s special cases, searched for anywhere in the path.
    search: str | None = None
    #: The whole pattern when it is literal: matched with string comparisons.
    literal: str | None = None
    #: Whether a literal pattern ends in `(?:/|$)` (else its `literal` ends in the `/`
    #: of a directory pattern).
    literal_ends_either: bool = False
    #: `pathspec` discards a pattern with an unclosed `[` (as git does): it matches nothing.
    discarded: bool = False

    def matches(self, path: str) -> bool:
        if self.literal is not None:
            return _literal_matches(self.literal, self.literal_ends_either, path)
        return self.matches_bits(PathBits(path))

    def matches_bits(self, bits: PathBits) -> bool:
        """`matches` for a path prepared once and asked about by many patterns."""
        if self.discarded:
            return False
        path = bits.path
        if self.literal is not None:
            return _literal_matches(self.literal, self.literal_ends_either, path)
        if self.search is not None:
            if self.search == _ANY_SLASH:
                return "/" in path
            return any(char != "\n" for char in path)
        return _run(self.pieces, bits)


def _literal_matches(literal: str, ends_either: bool, path: str) -> bool:
    # `^literal(?:/|$)`, searched (`$` also matches before a final newline), or
    # `^literal` where the literal ends in the `/` of a directory pattern.
    if not path.startswith(literal):
        return False
    if not ends_either:
        return True
    rest = path[len(literal) :]
    return rest in ("", "\n") or rest.startswith("/")


class PathBits:
    """A path's character positions as bitmasks (bit i: position i), made as needed."""

    __slots__ = (
        "_classes",
        "_masks",
        "_non_newline",
        "_non_slash",
        "_slash",
        "path",
    )

    def __init__(self, path: str) -> None:
        self.path = path
        self._masks: dict[str, int] = {}
        self._classes: dict[str, int] = {}
        self._slash: int | None = None
        self._non_slash = 0
        self._non_newline = 0

    @property
    def slash(self) -> int:
        if self._slash is None:
            everything = (1 << len(self.path)) - 1
            self._slash = self.mask("/")
            self._non_slash = everything & ~self._slash
            self._non_newline = everything & ~self.mask("\n")
        return self._slash

    @property
    def non_slash(self) -> int:
        self.slash  # noqa: B018 - computes the three masks
        return self._non_slash

    @property
    def non_newline(self) -> int:
        self.slash  # noqa: B018 - computes the three masks
        return self._non_newline

    def mask(self, char: str) -> int:
        """The positions holding `char`."""
        return self.occurrences(char)

    def occurrences(self, run: str) -> int:
        """The positions where `run` starts (overlapping ones too): one `str.find` each."""
        found = self._masks.get(run)
        if found is None:
            raw = bytearray(len(self.path) // 8 + 1)
            index = self.path.find(run)
            while index != -1:
                raw[index >> 3] |= 1 << (index & 7)
                index = self.path.find(run, index + 1)
            found = self._masks[run] = int.from_bytes(raw, "little")
        return found

    def class_mask(self, expr: str) -> int:
        """The positions holding a character the bracket expression `expr` matches."""
        found = self._classes.get(expr)
        if found is None:
            klass = _bracket(expr)
            found = 0
            for char in set(self.path):
                if klass.match(char):
                    found |= self.mask(char)
            self._classes[expr] = found
        return found


def _star(reached: int, through: int) -> int:
    """Every position reachable from `reached` by stepping over positions in `through`.

    Adding `through` to the reached positions inside it carries each run of
    `through` bits from the lowest reached one up to the first position past
    the run: the XOR leaves exactly those positions (the run's end included).
    """
    return reached | (((reached & through) + through) ^ through)


def _run(pieces: tuple[tuple[int, str], ...], bits: PathBits) -> bool:
    n = len(bits.path)
    reached = 1  # `^`: position 0
    for kind, argument in pieces:
        if kind == _CHAR:
            reached = (reached & bits.occurrences(argument)) << len(argument)
        elif kind == _STAR:
            reached = _star(reached, bits.non_slash)
        elif kind == _ONE:
            reached = (reached & bits.non_slash) << 1
        elif kind == _CLASS:
            reached = (reached & bits.class_mask(argument)) << 1
        elif kind == _LEAD:
            # `(?:.+/)?`: optionally one or more characters but a newline, then `/`.
            some = _star((reached & bits.non_newline) << 1, bits.non_newline)
            reached |= (some & bits.slash) << 1
        elif kind == _INNER:
            # `(?:/.+)?`: optionally `/`, then one or more characters but a newline.
            after = ((reached & bits.slash) << 1 & bits.non_newline) << 1
            reached |= _star(after, bits.non_newline)
        else:  # _END: `(?:/|$)`, and `$` matches before a final newline too
            ends = bits.slash | 1 << n
            if bits.path.endswith("\n"):
                ends |= 1 << (n - 1)
            return bool(reached & ends)
        if not reached:
            return False
    return bool(reached)  # the pattern ended in `/`: some position got past one


def compile_pattern(text: str) -> Matcher:
    """The matcher for a reservation pattern: anchored at the root, trailing spaces kept.

    Raises `Unmatchable` for what `pathspec` refuses to compile.
    """
    # As patterns.py always gave pathspec: a leading `/` anchors at the root, and
    # trailing spaces are escaped (gitignore would strip them).
    stripped = text.rstrip(" ")
    source = "/" + stripped + "\\ " * (len(text) - len(stripped))
    # GitIgnoreSpecPattern.pattern_to_regex: other trailing white space is stripped.
    if not source.endswith("\\ "):
        source = source.rstrip()
    if source == "/":
        return Matcher((), discarded=True)  # "a single '/' does not match any file"
    segments = source.split("/")
    is_dir = not segments[-1]
    del segments[0]  # the leading `/`: relative to the root, no `**` prepended
    if not segments[-1]:
        segments[-1] = "**"
    for index in range(len(segments) - 1, 0, -1):  # `**/**` is one `**`
        if segments[index - 1] == "**" and segments[index] == "**":
            del segments[index]
    if segments == ["**"]:
        return Matcher((), search=_ANY_SLASH if is_dir else _ANY_CHARACTER)
    if segments == ["**", "*"]:
        return Matcher((), search=_ANY_CHARACTER)
    if segments == ["**", "*", "**"]:
        return Matcher((), search=_ANY_SLASH)
    try:
        translated = _translate(segments)
    except _RangeError:
        return Matcher((), discarded=True)
    pieces: list[tuple[int, str]] = []
    for kind, argument in translated:
        if kind == _CLASS:
            _bracket(argument)  # what `re` cannot compile, pathspec cannot either
        if kind == _CHAR and pieces and pieces[-1][0] == _CHAR:
            pieces[-1] = (_CHAR, pieces[-1][1] + argument)
        else:
            pieces.append((kind, argument))
    ends_either = pieces[-1][0] == _END
    body = pieces[:-1] if ends_either else pieces
    if len(body) == 1 and body[0][0] == _CHAR:
        return Matcher(tuple(pieces), literal=body[0][1], literal_ends_either=ends_either)
    return Matcher(tuple(pieces))


class _RangeError(Exception):
    """An unclosed `[`: `pathspec` (like git) then discards the pattern."""


def _translate(segments: list[str]) -> list[tuple[int, str]]:
    """GitIgnoreSpecPattern.__translate_segments, piece by piece instead of regex text."""
    pieces: list[tuple[int, str]] = []
    need_slash = False
    end = len(segments) - 1
    for index, segment in enumerate(segments):
        if segment == "**":
            if index == 0:
                pieces.append((_LEAD, ""))
            elif index < end:
                pieces.append((_INNER, ""))
                need_slash = True
            else:
                pieces.append((_CHAR, "/"))  # `/`, or the directory mark `(?P<ps_d>/)`
        else:
            if need_slash:
                pieces.append((_CHAR, "/"))
            if segment == "*":
                pieces += [(_ONE, ""), (_STAR, "")]  # `[^/]+`
            else:
                pieces += _translate_glob(segment)
            if index == end:
                pieces.append((_END, ""))
            need_slash = True
    return pieces


def _translate_glob(glob: str) -> list[tuple[int, str]]:
    """_GitIgnoreBasePattern._translate_segment_glob with range_error='raise'."""
    pieces: list[tuple[int, str]] = []
    escape = False
    i, end = 0, len(glob)
    while i < end:
        char = glob[i]
        i += 1
        if escape:
            escape = False
            pieces.append((_CHAR, char))
        elif char == "\\":
            escape = True
        elif char == "*":
            pieces.append((_STAR, ""))
        elif char == "?":
            pieces.append((_ONE, ""))
        elif char == "[":
            j = i
            if j < end and glob[j] in "!^":
                j += 1
            if j < end and glob[j] == "]":
                j += 1
            while j < end and glob[j] != "]":
                j += 1
            if j >= end:
                raise _RangeError
            j += 1
            expr = "["
            if glob[i] in "!^":
                expr += "^"
                i += 1
            expr += glob[i:j].replace("\\", "\\\\")
            pieces.append((_CLASS, expr))
            i = j
        else:
            pieces.append((_CHAR, char))
    if escape:
        raise Unmatchable("a `\\` at the end of a segment escapes nothing")
    return pieces


@functools.lru_cache(maxsize=1024)
def _bracket(expr: str) -> re.Pattern[str]:
    try:
        # `[[:`, `[a--b]` and the like draw a FutureWarning ("possible nested set"):
        # their meaning today is what pathspec matches, and the one we must match.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return re.compile(expr)
    except re.error as exc:
        raise Unmatchable(f"bad bracket expression {expr!r}: {exc}") from None

"""One request's answers about patterns, computed first on a reader, then reused in the
writer (issue 44).

Whether a pattern covers a path, or overlaps another pattern, depends on their
texts alone, never on the database. `file.guard` must decide in the writer (it
may reserve, and two guards of one file must be ordered), but the matching it
needs is what costs (10,000 live wildcard reservations x 16 paths: 160,000
matches). So the handler first runs the same reads on a reader, off the writer,
with a `Verdicts` recording what it matched; the writer then runs the guard
exactly as before, every SQL statement included (liveness, exclusivity,
holders, all read in its own transaction), and takes each answer it can from
the record. A pattern the reader never saw (granted in between) is matched in
the writer there and then, so the verdict is exactly the writer's own.

What is kept is bounded by the live rows, not by paths x rows: for each path
(or pattern) the reader went through all of, the texts that matched it; and
the texts the reader matched at all. The reader saw one snapshot, and which
rows are candidates for a path depends only on their prefix, so a text it
matched against anything was a candidate of every path whose keys hold that
text's prefix: for a path it finished, a seen text not among its matches does
not match it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from coordd_wire.patterns import Pattern, overlap, parse
from coordd_wire.wildmatch import PathBits


class _Record:
    """What the reader matched for one kind of question (covers, or overlaps)."""

    def __init__(self) -> None:
        #: Every text the reader matched against something.
        self.seen: set[str] = set()
        #: For each path or pattern the reader went through whole: the texts that matched.
        self.matched: dict[str, set[str]] = {}
        #: Paths or patterns under way (matched so far): finished by `done`.
        self.partial: dict[str, set[str]] = {}

    def known(self, subject: str, text: str) -> bool | None:
        matched = self.matched.get(subject)
        if matched is not None and text in self.seen:
            return text in matched
        return None

    def note(self, subject: str, text: str, answer: bool) -> None:
        self.seen.add(text)
        found = self.partial.setdefault(subject, set())
        if answer:
            found.add(text)

    def done(self, subject: str) -> None:
        self.matched[subject] = self.partial.pop(subject, set())


class Verdicts:
    """`covers` and `overlap` answers for one request: recorded on a reader, then
    (after `freeze`) looked up in the writer, which matches only what is new."""

    def __init__(self) -> None:
        self._parsed: dict[str, Pattern] = {}
        self._bits: dict[str, PathBits] = {}
        self._covers = _Record()
        self._overlaps = _Record()
        self._frozen = False
        #: Answers computed rather than looked up (what the tests count in the writer).
        self.computed = 0

    def freeze(self) -> None:
        """The reader is done: from now on nothing is recorded, only looked up."""
        self._frozen = True
        self.computed = 0
        self._bits.clear()

    def parsed(self, text: str) -> Pattern:
        """`text` parsed, once per request whatever the shared parse cache holds."""
        found = self._parsed.get(text)
        if found is None:
            found = self._parsed[text] = parse(text)
        return found

    def covers(self, text: str, path: str) -> bool:
        """Does the stored pattern `text` cover `path` (a checked relative path)?"""
        known = self._covers.known(path, text)
        if known is not None:
            return known
        self.computed += 1
        bits = self._bits.get(path)
        if bits is None:  # prepared once per path for every pattern asked about it
            bits = self._bits[path] = PathBits(path)
        answer = self.parsed(text).covers_bits(bits)
        if not self._frozen:
            self._covers.note(path, text, answer)
        return answer

    def covering(self, rows: Sequence[Sequence[Any]], path: str) -> list[int]:
        """The ids of `rows` (id, pattern, ...) whose pattern covers `path`.

        Where the reader went through `path`, a row whose text it saw is answered by
        two set lookups inline: the writer's share of a guard is this loop, once per
        path and candidate (256 paths x 10,000 wildcard reservations at worst)."""
        matched = self._covers.matched.get(path)
        if matched is None:
            return [int(row[0]) for row in rows if self.covers(row[1], path)]
        seen = self._covers.seen
        return [
            int(row[0])
            for row in rows
            if (text := row[1]) in matched or (text not in seen and self.covers(text, path))
        ]

    def covered_all(self, path: str) -> None:
        """Every candidate of `path` was asked about (on the reader)."""
        if not self._frozen:
            self._covers.done(path)

    def overlaps(self, pattern: Pattern, text: str) -> bool:
        """Could some path be covered by both `pattern` and the stored pattern `text`?"""
        known = self._overlaps.known(pattern.text, text)
        if known is not None:
            return known
        self.computed += 1
        answer = overlap(pattern, self.parsed(text))
        if not self._frozen:
            self._overlaps.note(pattern.text, text, answer)
        return answer

    def any_overlapping(self, pattern: Pattern, rows: Sequence[Sequence[Any]]) -> bool:
        """Whether any of `rows` (id, pattern, ...) overlaps `pattern`: first what the
        reader found in the way, then, where it went through them all, only the texts
        it never saw are matched."""
        record = self._overlaps
        found = record.matched.get(pattern.text)
        ahead = found or record.partial.get(pattern.text) or set()
        if any(row[1] in ahead for row in rows):
            return True
        if found is None:
            return any(self.overlaps(pattern, row[1]) for row in rows)
        seen = record.seen
        return any(row[1] not in seen and self.overlaps(pattern, row[1]) for row in rows)

    def overlapped_all(self, pattern: Pattern) -> None:
        """Every candidate of `pattern` was asked about (on the reader)."""
        if not self._frozen:
            self._overlaps.done(pattern.text)

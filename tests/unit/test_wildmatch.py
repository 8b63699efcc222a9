"""The linear-time matcher against `pathspec` itself, and against the shapes that hung it.

`pathspec` is the reference: on generated patterns small enough for its
backtracking regexes to answer at once (the SAFE ones), the matcher must
agree with it on every generated path, on what it refuses to compile, and
on what it discards, quirks included (a negated class matches `/`, `**`'s
`.+` does not match a newline, `$` matches before a final newline).
"""

from __future__ import annotations

import warnings

import pathspec
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coordd_wire.wildmatch import PathBits, Unmatchable, compile_pattern

#: Pattern tokens: literals, every wildcard, escapes, classes (negated, with a
#: leading `]`, unclosed), separators, and the white space pathspec strips or keeps.
PATTERN_TOKENS = (
    "a", "b", "ab", "/", "*", "**", "?", "[ab]", "[!a]", "[^b]", "[]a]", "[a-b]",
    "\\*", "\\", "[", " ", "\t", "\n", "]", "!", "[[:a:]]", "[b-a]", "[a--]",
)  # fmt: skip
PATH_TOKENS = ("a", "b", "ab", "/", "\n", " ", "*", "]", "!", "\t")

safe_patterns = st.lists(st.sampled_from(PATTERN_TOKENS), min_size=1, max_size=8).map("".join)
paths = st.lists(st.sampled_from(PATH_TOKENS), min_size=0, max_size=10).map("".join)


def reference(text: str) -> pathspec.GitIgnoreSpec:
    """How coordd asked pathspec before: anchored at the root, trailing spaces escaped."""
    stripped = text.rstrip(" ")
    source = "/" + stripped + "\\ " * (len(text) - len(stripped))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # `[[a]`: "possible nested set"
        return pathspec.GitIgnoreSpec.from_lines([source])


def pathspec_normalised(path: str) -> str:
    # PathSpec.match_file drops a leading `/` or `./` before matching.
    if path.startswith("/"):
        return path[1:]
    if path.startswith("./"):
        return path[2:]
    return path


# 3,000 examples of pathspec's compile take minutes on a busy machine: the hang
# bound is raised for this test alone (a timeout inside Hypothesis reads as
# FlakyStrategyDefinition, not as a timeout).
@pytest.mark.timeout(900)
@settings(max_examples=3000, deadline=None)
@given(safe_patterns, st.lists(paths, min_size=1, max_size=8))
@example("a[!b]c", ["a/c", "abc", "axc"])
@example("**/a", ["\n/a", "b/a", "x\n/a"])
@example("a", ["a\n", "a\n\n", "a/"])
@example("a/**/b", ["a/\n/b", "a/x/b", "a/b"])
@example("*/", ["a", "a/b"])
@example("**/", ["a", "a/b"])
@example("**/*", ["\n", "a"])
@example("a\t", ["a", "a\t"])
def test_the_matcher_decides_as_pathspec_does(text: str, given_paths: list[str]) -> None:
    try:
        expected = reference(text)
    except Exception:  # a ValueError or re.error: either way refused
        with pytest.raises(Unmatchable):
            compile_pattern(text)
        return
    matcher = compile_pattern(text)
    for given_path in given_paths:
        want = expected.match_file(given_path)
        path = pathspec_normalised(given_path)
        assert matcher.matches(path) == want, (text, path)
        assert matcher.matches_bits(PathBits(path)) == want, (text, path)


#: The shapes of issue 29 that held pathspec (and the GIL) for seconds to minutes.
HANGS = [
    ("node_modules/" + "**/*/" * 10 + "zzz", "node_modules/" + "/".join(["d"] * 60)),
    ("*a" * 12 + "*b", "a" * 30),
    ("*a" * 12 + "*b", "a" * 4096),
    ("a/**/" * 8 + "x", "/".join(["a"] * 40)),
    ("a/**/" * 8 + "x", "/".join(["a"] * 2048)),
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("text", "path"), HANGS)
def test_the_shapes_that_hung_pathspec_answer_at_once(text: str, path: str) -> None:
    """No timing is asserted (the machine may be busy): the long paths are ones a
    backtracking matcher would take far longer than the timeout over, so a return at
    all is the proof; bench/patterns.py measures the cost."""
    assert not compile_pattern(text).matches(path)


def test_small_versions_of_the_hanging_shapes_still_agree_with_pathspec() -> None:
    for text, path in [
        ("*a" * 3 + "*b", "aaaab"),
        ("*a" * 3 + "*b", "aaaa"),
        ("a/**/" * 3 + "x", "a/a/a/a/x"),
        ("a/**/" * 3 + "x", "a/a/a/x/y"),
        ("n/" + "**/*/" * 2 + "z", "n/d/d/z"),
        ("n/" + "**/*/" * 2 + "z", "n/d/z/d/z/q"),
    ]:
        assert compile_pattern(text).matches(path) == reference(text).match_file(path), text

"""Other people's text in Markdown that reads the same raw and rendered (`coord export`,
issue 47 item 9): escaped only where Markdown would act on it, names and paths as code
spans (never escaped inside), blocks in fences longer than any backtick run in them."""

from __future__ import annotations

import functools
import re

from coordd_client.text import clean

#: What Markdown acts on anywhere in a line: escapes, code, emphasis, links, HTML.
_MD_ALWAYS = re.compile(r"([\\`*\[\]<>])")
#: `_` is emphasis only at a word's edge (CommonMark: never inside `snake_case`).
_MD_EDGE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
#: An entity (`&amp;`, `&#60;`) would be shown as the character it names.
_MD_ENTITY = re.compile(r"&(?=#?\w+;)")
#: A character one of the three could act on: text without any is left as it is.
_MD_MAYBE = re.compile(r"[\\`*\[\]<>_&]")


def text(text: str) -> str:
    """Someone else's one-line text in Markdown: controls cleaned, and escaped only where
    Markdown would act on it, so it reads the same raw and rendered. Every caller puts
    it after other text on its line, where `#`, `-` or `1.` start no block."""
    text = clean(text)  # may bring a backslash (`\\x1b`), which is escaped below
    if _MD_MAYBE.search(text) is None:  # most titles and results: nothing to escape
        return text
    text = _MD_ALWAYS.sub(r"\\\1", text)
    text = _MD_EDGE_UNDERSCORE.sub(r"\\_", text)
    return _MD_ENTITY.sub(r"\\&", text)


@functools.lru_cache(maxsize=4096)
def code(text: str) -> str:
    """A name, path, project or branch as a code span: nothing inside it is escaped, and
    its fence is longer than any backtick run in it. Kept for the names met again (an
    export names the same agents, kinds and projects on every line)."""
    text = clean(text)
    if "`" not in text:
        return f"`{text}`"
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def fenced(text: str) -> str:
    """A block of someone else's text, in a fence longer than any backtick run in it."""
    if "`" not in text:
        return f"```text\n{text}\n```"
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"

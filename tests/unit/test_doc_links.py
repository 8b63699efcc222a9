"""Every relative link in the README and docs/ reaches a file, and its anchor a heading.

The README is the front door and the reference lives under docs/ (issue 47
item 10): a page moved or a heading renamed must not leave a link that goes
nowhere, which nobody notices until a new user clicks it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(
    [
        ROOT / "README.md",
        ROOT / "BENCHMARKS.md",
        ROOT / "SECURITY.md",
        *(ROOT / "docs").glob("*.md"),
    ]
)
#: `[text](target)`, the target without spaces; images included.
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")
CODE_SPAN = re.compile(r"`[^`]*`")


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks (a link in a console sample is not a link)."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip())
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading's anchor in a page, with GitHub's -1, -2 for repeats."""
    seen: dict[str, int] = {}
    found = set()
    for line in prose_lines(page.read_text()):
        match = re.match(r"^#{1,6}\s+(.*)$", line)
        if match is None:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(page: Path) -> list[str]:
    """The link targets of a page's prose (a link's text may wrap), code spans left out."""
    prose = "\n".join(CODE_SPAN.sub("", line) for line in prose_lines(page.read_text()))
    return [m.group(1) for m in LINK.finditer(prose)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_reaches_a_file_and_heading(page: Path) -> None:
    broken = []
    for target in links(page):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        goal = (page.parent / path).resolve() if path else page
        if not goal.exists():
            broken.append(f"{target}: no such file")
        elif anchor and goal.suffix == ".md" and anchor not in anchors(goal):
            broken.append(f"{target}: no heading with that anchor in {goal.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)} has broken links:\n" + "\n".join(broken)


def test_every_docs_page_is_reachable_from_the_readme() -> None:
    """A page nobody links to is a page nobody reads: each is one click from the README."""
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in links(ROOT / "README.md")}
    missing = [p.name for p in (ROOT / "docs").glob("*.md") if p.resolve() not in linked]
    assert not missing, f"docs pages the README does not link: {missing}"


def test_the_slug_rule_matches_githubs() -> None:
    assert slug("Agents talk: ask, answer, hand over (protocol 1.2)") == (
        "agents-talk-ask-answer-hand-over-protocol-12"
    )
    assert slug("Watching the agents: `coord top`") == "watching-the-agents-coord-top"

"""Each feature flag's "where written down" (`coordd_wire.features`) points at a section
that exists and says it.

docs/PROTOCOL.md, the conformance document, has a section for every flag (a 1.2
flag's detail is in docs/PROTOCOL-1.2.md under the same number, unless its `where`
names another as "1.2 section N"); the generated reference prints `where` beside each
flag, so a section renumbered or never written would send a reader nowhere.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from coordd_wire.features import FEATURES, Feature

DOCS = Path(__file__).resolve().parents[2] / "docs"
HEADING = re.compile(r"^(#{2,3}) (\d+[a-z]?)\. ", re.MULTILINE)


def sections(path: Path) -> dict[str, str]:
    """The numbered sections of a protocol document ("9", "10a"): heading and body, up to
    the next heading of the same level or above."""
    text = path.read_text()
    found: dict[str, str] = {}
    for match in HEADING.finditer(text):
        level = len(match.group(1))
        ends = re.compile(rf"^#{{1,{level}}} ", re.MULTILINE)
        after = ends.search(text, match.end())
        found[match.group(2)] = text[match.start() : after.start() if after else len(text)]
    return found


CONFORMANCE = sections(DOCS / "PROTOCOL.md")
ADDITIONS = sections(DOCS / "PROTOCOL-1.2.md")


def where(feature: Feature) -> tuple[str, str | None, list[str]]:
    """The conformance section, the 1.2 document's section (None for 1.1), and the names
    the `where` text says are there."""
    section = re.match(r"section (\d+[a-z]?)\b", feature.where)
    assert section, f"{feature.name}: `where` must begin with its section: {feature.where!r}"
    elsewhere = re.search(r"\(1\.2 section (\d+[a-z]?)\)", feature.where)
    detail = None
    if feature.version == "1.2":
        detail = elsewhere.group(1) if elsewhere else section.group(1)
    names = re.findall(r"`([^`]+)`", feature.where.partition(":")[2])
    return section.group(1), detail, names


@pytest.mark.parametrize("feature", FEATURES, ids=[f.name for f in FEATURES])
def test_the_section_a_feature_names_exists_and_names_it(feature: Feature) -> None:
    section, detail, names = where(feature)
    assert section in CONFORMANCE, f"docs/PROTOCOL.md has no section {section}"
    assert f"`{feature.name}`" in CONFORMANCE[section], (
        f"docs/PROTOCOL.md section {section} does not name the flag `{feature.name}`"
    )
    text = CONFORMANCE[section]
    if detail is not None:
        assert detail in ADDITIONS, f"docs/PROTOCOL-1.2.md has no section {detail}"
        text = ADDITIONS[detail]
    # A whole name: `budget` is not found in `usage.budget` nor `usage` in `usage.budget`.
    whole = r"(?<![\w.]){}(?!\w|\.\w)"
    missing = [n for n in names if not re.search(whole.format(re.escape(n)), text)]
    assert missing == [], f"{feature.name}: not in the section its `where` names"


def test_the_versions_paragraph_names_every_flag() -> None:
    """docs/PROTOCOL.md's "Versions and features" says what each version added."""
    text = (DOCS / "PROTOCOL.md").read_text()
    paragraph = text[text.index("## Versions and features") : text.index("## 1. Transport")]
    missing = [f.name for f in FEATURES if f"`{f.name}`" not in paragraph]
    assert missing == []

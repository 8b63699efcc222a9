"""The paths a Codex `apply_patch` touches, from its raw patch text.

The headers are `*** Add File: P`, `*** Update File: P`, `*** Delete File: P`
and, after an update, `*** Move to: P`; they may be indented. Anything else
(hunks, context lines, a path-like string inside a hunk) is not a header.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"^[ \t]*\*\*\* (?:Add File|Update File|Delete File|Move to): ?(.*?)[ \t]*$")


def patch_paths(patch: str) -> list[str]:
    """Every path the patch names, in order, without duplicates or empty names."""
    found: list[str] = []
    for line in patch.splitlines():
        match = _HEADER.match(line)
        if match and match.group(1) and match.group(1) not in found:
            found.append(match.group(1))
    return found

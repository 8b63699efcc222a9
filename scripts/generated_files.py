"""Writing generated files, or checking them: the one `main` of every generator.

`python scripts/<generator>.py` rewrites its files; `--check` (what
tests/unit/test_generated_fresh.py runs) changes nothing and fails, naming each file
and the `make` target that rewrites it, when one is not what the code says now.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path


def write_or_check(files: Mapping[Path, str], argv: list[str], *, target: str, usage: str) -> int:
    """Exit status of a generator run with `argv`, for `files` ({path: its text})."""
    if argv == ["--check"]:
        stale = [path for path, text in files.items() if not _holds(path, text)]
        for path in stale:
            print(f"{path} is stale: run `make {target}` and commit it", file=sys.stderr)
        return 1 if stale else 0
    if argv:
        print(usage, file=sys.stderr)
        return 2
    for path, text in files.items():
        path.write_text(text)
    return 0


def _holds(path: Path, text: str) -> bool:
    return path.exists() and path.read_text() == text

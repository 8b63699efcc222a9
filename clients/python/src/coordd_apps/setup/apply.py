"""Plan every change of one host first, then write all of it or none of it.

For `--remove` to give back the original bytes (not a re-serialised copy),
setup records, per file, what it found before its first change and what it
left; when the file is still as setup left it, removal restores those bytes
exactly; when someone edited it since, removal takes out only setup's piece.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from coordd_apps.setup.formats import Piece
from coordd_wire.paths import state_dir


@dataclass(frozen=True)
class Target:
    """One file and the piece setup owns in it."""

    path: Path
    piece: Piece
    executable: bool = False


@dataclass(frozen=True)
class Change:
    path: Path
    before: str | None
    after: str | None  # None: the file goes
    executable: bool = False
    #: Recorded for a later exact `--remove`: the bytes found before setup's first change.
    original: str | None = None

    @property
    def changes(self) -> bool:
        return self.before != self.after


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except FileNotFoundError:
        return None


def _record_file(path: Path) -> Path:
    key = hashlib.sha256(str(path.absolute()).encode()).hexdigest()[:24]
    return state_dir() / "setup" / f"{key}.json"


def _digest(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode()).hexdigest()


def _recorded(path: Path) -> tuple[str | None, str | None] | None:
    """(original text, digest of what setup left), if setup changed this file before."""
    try:
        record = json.loads(_record_file(path).read_text())
    except (OSError, ValueError):
        return None
    original = record.get("original")
    text = None if original is None else base64.b64decode(original).decode()
    return text, record.get("left")


def plan_add(targets: list[Target]) -> list[Change]:
    changes = []
    for target in targets:
        before = _read(target.path)
        after = target.piece.add(before)
        recorded = _recorded(target.path)
        if recorded is not None and recorded[1] == _digest(before):
            original = recorded[0]  # setup ran before and nobody touched the file since
        elif before is not None and target.piece.present(before):
            original = target.piece.remove(before)
        else:
            original = before
        changes.append(Change(target.path, before, after, target.executable, original))
    return changes


def plan_remove(targets: list[Target]) -> list[Change]:
    changes = []
    for target in targets:
        before = _read(target.path)
        if before is None:
            continue
        recorded = _recorded(target.path)
        if recorded is not None and recorded[1] == _digest(before):
            after = recorded[0]  # exactly what was there before setup
        elif target.piece.present(before):
            after = target.piece.remove(before)
        else:
            after = before
        changes.append(Change(target.path, before, after, target.executable))
    return changes


def diff(changes: list[Change]) -> str:
    out: list[str] = []
    for change in changes:
        if not change.changes:
            continue
        out += difflib.unified_diff(
            (change.before or "").splitlines(keepends=True),
            (change.after or "").splitlines(keepends=True),
            fromfile=str(change.path) if change.before is not None else "/dev/null",
            tofile=str(change.path) if change.after is not None else "/dev/null",
        )
    return "".join(out)


def write(changes: list[Change], *, removing: bool) -> None:
    """Write every change (the plan was computed in full first, so a parse error wrote nothing)."""
    for change in changes:
        if not change.changes:
            continue
        record = _record_file(change.path)
        if change.after is None:
            change.path.unlink(missing_ok=True)
        else:
            change.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = change.path.with_name(f".{change.path.name}.coord-{os.getpid()}")
            temporary.write_text(change.after)
            mode = change.path.stat().st_mode if change.path.exists() else 0o644
            if change.executable:
                mode |= stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
            os.chmod(temporary, stat.S_IMODE(mode))
            temporary.replace(change.path)
        if removing:
            record.unlink(missing_ok=True)
        else:
            record.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            original = change.original
            encoded = None if original is None else base64.b64encode(original.encode()).decode()
            record.write_text(json.dumps({"original": encoded, "left": _digest(change.after)}))

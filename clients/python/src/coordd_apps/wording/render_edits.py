"""How another worktree's edit of a file is said: to a tab's model by the edit hooks,
and on the board of `coord prime`, the MCP server and session start (`summary`).

The standard library only: the pre-edit hook imports it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from coordd_apps.wording.advice import when

if TYPE_CHECKING:
    from coordd_wire.wire_edits import FileEdit


def other_line(edit: FileEdit, project: str, now: float | None = None) -> str:
    """ "codex-3 has also edited src/x.py in wt-c, 12 min ago (13:30Z)": a merge conflict in the
    making, said before it happens (`coord prime`, the MCP board and `coord top` too)."""
    where = os.path.basename(edit.worktree.rstrip("/")) or edit.worktree
    if edit.worktree.rstrip("/") == project.rstrip("/"):
        where = f"{where} (the main worktree)"
    return f"coord: {edit.agent} has also edited {edit.path} in {where}, {when(edit.at, now)}"

"""How another worktree's edit of a file is said: to a tab's model by the edit hooks,
and on the board of `coord prime`, the MCP server and session start (`summary`).

The standard library only: the pre-edit hook imports it.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from coordd_client.protocol.wire_edits import FileEdit


def other_line(edit: FileEdit, project: str, now: float | None = None) -> str:
    """ "codex-3 has also edited src/x.py in wt-c, 12 min ago": a merge conflict in the
    making, said before it happens (`coord prime`, the MCP board and `coord top` too)."""
    where = os.path.basename(edit.worktree.rstrip("/")) or edit.worktree
    if edit.worktree.rstrip("/") == project.rstrip("/"):
        where = f"{where} (the main worktree)"
    return f"coord: {edit.agent} has also edited {edit.path} in {where}, {ago(edit.at, now)}"


def ago(at: str, now: float | None = None) -> str:
    """How long ago an RFC 3339 UTC instant was, in whole minutes ("just now" under one)."""
    import calendar

    moment = calendar.timegm(time.strptime(at[:19], "%Y-%m-%dT%H:%M:%S"))
    minutes = int(((time.time() if now is None else now) - moment) // 60)
    if minutes < 1:
        return "just now"
    return f"{minutes} min ago" if minutes < 120 else f"{minutes // 60} h ago"

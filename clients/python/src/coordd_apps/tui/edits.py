"""`coord top`'s one word on recorded edits (docs/PROTOCOL-1.2.md section 11, issue 33): how
many files live agents edited in more than one worktree lately, merge conflicts in the
making. Kept to the status line, and shown only when there are some.
"""

from __future__ import annotations

from coordd_client.client import Client
from coordd_wire.errors import MethodNotFound

#: Recorded edits read per refresh (newest first).
EDITS_READ = 200


def edited_in_several_worktrees(client: Client, project: str | None) -> int:
    """Files of `project` edited in two or more worktrees by live agents; 0 without a
    project (the records are per project) or from a daemon without the feature."""
    if project is None:
        return 0
    try:
        edits = client.recent_edits(project=project, limit=EDITS_READ).edits
    except MethodNotFound:
        return 0
    worktrees: dict[str, set[str]] = {}
    for edit in edits:
        worktrees.setdefault(edit.path, set()).add(edit.worktree)
    return sum(1 for places in worktrees.values() if len(places) > 1)


def status_word(count: int) -> str | None:
    """The status line's extra, or None when there is nothing to say."""
    if not count:
        return None
    return f"{count} file{'s' if count != 1 else ''} edited in 2+ worktrees"

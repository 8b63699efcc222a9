"""The builders of docs/PROTOCOL-1.2.md section 11 (issue 33), feature `file_edits`.

`methods` imports them, so both clients wrap them as they wrap every other
builder; an agent left None is the client's default, a project too.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from coordd_client.methods import _clean
from coordd_wire import wire_edits
from coordd_wire.method_table import Call, call


def worktree_key(worktree: str) -> str:
    """The worktree as the board keys it: resolved (symlinks, `.`, a trailing `/`), so
    `W/` and `W/.` name the same records as `W`. A relative one is left for the daemon
    to refuse rather than read against this process's directory."""
    return os.path.realpath(worktree) if worktree.startswith("/") else worktree


def file_guard(
    paths: Sequence[str],
    *,
    worktree: str,
    agent: str | None = None,
    project: str | None = None,
    hashes: Sequence[str] | None = None,
    auto_reserve: bool | None = None,
    ttl_s: float | None = None,
) -> Call[wire_edits.GuardResult]:
    """The pre-edit verdict in one round trip: reserved by another, stale, else reserve."""
    params = {
        "paths": list(paths),
        "worktree": worktree_key(worktree),
        "agent": agent,
        "project": project,
        "hashes": None if hashes is None else list(hashes),
        "auto_reserve": auto_reserve,
        "ttl_s": ttl_s,
    }
    return call("file.guard", params)


def record_edit(
    paths: Sequence[str],
    hashes: Sequence[str],
    *,
    worktree: str,
    agent: str | None = None,
    project: str | None = None,
) -> Call[wire_edits.RecordResult]:
    """An edit made (content hashes after it); appends `file.edited`."""
    params = _recorded(paths, hashes, worktree, agent, project)
    return call("file.record_edit", params)


def record_read(
    paths: Sequence[str],
    hashes: Sequence[str],
    *,
    worktree: str,
    agent: str | None = None,
    project: str | None = None,
) -> Call[wire_edits.RecordResult]:
    """A read made (content hashes read): the agent's baseline for stale writes."""
    params = _recorded(paths, hashes, worktree, agent, project)
    return call("file.record_read", params)


def _recorded(
    paths: Sequence[str],
    hashes: Sequence[str],
    worktree: str,
    agent: str | None,
    project: str | None,
) -> dict[str, object]:
    """The params both records take (section 11.3): paths, their hashes, and whose."""
    return {
        "paths": list(paths),
        "hashes": list(hashes),
        "worktree": worktree_key(worktree),
        "agent": agent,
        "project": project,
    }


def recent_edits(
    *, project: str | None = None, agent: str | None = None, limit: int | None = None
) -> Call[wire_edits.RecentResult]:
    """Live agents' recorded edits; with `agent`, others' edits of its paths elsewhere."""
    return call("file.recent", _clean(dict(locals())))

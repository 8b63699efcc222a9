"""Before an edit (or a commit): is any of these files exclusively reserved by another agent?

Paths are asked about relative to the top of the worktree they are in, so a
reservation covers a file in every worktree of the repository.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from coordd_client.client import Client
from coordd_client.protocol.errors import CoordError
from coordd_client.protocol.wire import MAX_CHECK_PATHS, PathConflict
from coordd_client.worktree import board_path

#: Deny instead of allow when the daemon cannot be asked.
STRICT_ENV = "COORD_GUARD_STRICT"
#: Seconds a guard waits for the daemon: hosts give hooks a few seconds at most.
GUARD_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    reason: str
    #: Set when the daemon could not be asked (the verdict then follows the failure policy).
    unreachable: str | None = None


def check_paths(
    socket: os.PathLike[str] | str,
    paths: Sequence[str],
    *,
    agent: str,
    project: str,
    cwd: str,
    strict: bool | None = None,
) -> Verdict:
    asked = {}
    for path in paths:
        key = board_path(path, cwd)
        # A file outside the project (outside every worktree of it) is nobody's here.
        if not os.path.isabs(key) or key.startswith(project.rstrip("/") + "/"):
            asked[key] = path
    return check_board_paths(socket, asked, agent=agent, project=project, strict=strict)


def check_board_paths(
    socket: os.PathLike[str] | str,
    asked: Mapping[str, str],
    *,
    agent: str,
    project: str,
    strict: bool | None = None,
) -> Verdict:
    """`asked` maps each path as the board names it (relative to its worktree's top)
    to the path to show in the verdict."""
    if not asked:
        return Verdict(True, "")
    strict = os.environ.get(STRICT_ENV) == "1" if strict is None else strict
    keys = list(asked)
    found: list[PathConflict] = []
    try:
        with Client(socket, timeout_s=GUARD_TIMEOUT_S) as client:
            # One check takes at most MAX_CHECK_PATHS paths (PROTOCOL.md section 10): a
            # larger commit is asked about in chunks, on one connection. Sending it whole
            # was refused with -32602 and read as "could not check": a fail-open.
            for start in range(0, len(keys), MAX_CHECK_PATHS):
                chunk = keys[start : start + MAX_CHECK_PATHS]
                found += client.check_paths(chunk, project=project, agent=agent).conflicts
    except CoordError as exc:
        why = f"coord could not check reservations ({exc.message})"
        if strict:
            return Verdict(False, f"{why}; {STRICT_ENV}=1 denies edits until it can", why)
        return Verdict(True, f"{why}; allowed", why)
    held = [c for c in found if c.reservation.exclusive]
    if not held:
        return Verdict(True, "")
    return Verdict(False, "; ".join(_line(asked.get(c.path, c.path), c) for c in held[:5]))


def _line(path: str, conflict: PathConflict) -> str:
    r = conflict.reservation
    task = f" for task #{r.task_id}" if r.task_id is not None else ""
    why = f" ({r.reason})" if r.reason else ""
    return (
        f"{path} is reserved (exclusive, pattern {r.pattern}) by {r.agent} until"
        f" {r.expires_at[11:16]}Z{task}{why}; ask {r.agent} for it with a task assigned to"
        f" them (post_task with assignee {r.agent}), or pick other work"
    )

"""Before a commit (and an edit, on a daemon from before section 11): is any of these files
exclusively reserved by another agent?

Paths are asked about relative to the top of the worktree they are in, so a
reservation covers a file in every worktree of the repository. A file in
another repository (one nested in this one, a submodule) is asked about on
that repository's board, relative to its top (`hooks.files.groups`). The
pre-edit hook itself asks `file.guard` (`hooks/edits.py`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping

import msgspec

from coordd_client import boards
from coordd_client.client import Client
from coordd_client.protocol.bounds import MAX_CHECK_PATHS
from coordd_client.protocol.errors import CoordError, WrongBoard
from coordd_client.protocol.wire import PathConflict

#: Deny instead of allow when the daemon cannot be asked.
STRICT_ENV = "COORD_GUARD_STRICT"
#: Seconds a guard waits for the daemon: hosts give hooks a few seconds at most.
GUARD_TIMEOUT_S = 3.0


class Verdict(msgspec.Struct, frozen=True):
    allowed: bool
    reason: str
    #: Set when the daemon could not be asked (the verdict then follows the failure policy).
    unreachable: str | None = None


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
    return check_projects(socket, {project: asked}, agent=agent, strict=strict)


def check_projects(
    socket: os.PathLike[str] | str,
    by_project: Mapping[str, Mapping[str, str]],
    *,
    agent: str,
    strict: bool | None = None,
) -> Verdict:
    """`check_board_paths` for paths on several boards: {project: {board path: shown}}."""
    by_project = {p: asked for p, asked in by_project.items() if asked}
    if not by_project:
        return Verdict(True, "")
    strict = os.environ.get(STRICT_ENV) == "1" if strict is None else strict
    lines: list[str] = []
    try:
        with Client(socket, timeout_s=GUARD_TIMEOUT_S) as client:
            boards.check(client)
            for project, asked in by_project.items():
                keys = list(asked)
                # One check takes at most MAX_CHECK_PATHS paths (PROTOCOL.md section 10):
                # a larger commit is asked about in chunks, on one connection. Sent whole
                # it was refused with -32602 and read as "could not check": a fail-open.
                for start in range(0, len(keys), MAX_CHECK_PATHS):
                    chunk = keys[start : start + MAX_CHECK_PATHS]
                    found = client.check_paths(chunk, project=project, agent=agent).conflicts
                    held = [c for c in found if c.reservation.exclusive]
                    lines.extend(line(asked.get(c.path, c.path), c) for c in held)
    except WrongBoard as exc:  # reachable, and the wrong board: nothing to allow on
        return Verdict(False, exc.message)
    except CoordError as exc:
        why = f"coord could not check reservations ({exc.message})"
        if strict:
            return Verdict(False, f"{why}; {STRICT_ENV}=1 denies edits until it can", why)
        return Verdict(True, f"{why}; allowed", why)
    if not lines:
        return Verdict(True, "")
    return Verdict(False, "; ".join(lines[:5]))


def line(path: str, conflict: PathConflict) -> str:
    """Why an edit of `path` is denied: who holds it, until when, and what to do."""
    r = conflict.reservation
    task = f" for task #{r.task_id}" if r.task_id is not None else ""
    why = f" ({r.reason})" if r.reason else ""
    return (
        f"{path} is reserved (exclusive, pattern {r.pattern}) by {r.agent} until"
        f" {r.expires_at[11:16]}Z ({time_left(r.expires_at)}){task}{why};"
        f" ask {r.agent} to hand it over:"
        f" request_release with patterns [{r.pattern!r}] (`coord request {_quoted(r.pattern)}"
        " --wait 300` in a shell), or pick other work"
    )


def time_left(at: str, now: float | None = None) -> str:
    """How long until an RFC 3339 UTC instant, in whole minutes: a model reading a deny
    seldom knows what time it is ("in 9 min", "in under a minute", "in 3 h"). Measured
    on this machine's clock against the daemon's instant: the same clock for a local
    daemon; a team node's skew is seconds, below what whole minutes show."""
    import calendar  # stdlib and small; not at the top, with the rest of a hook's imports

    moment = calendar.timegm(time.strptime(at[:19], "%Y-%m-%dT%H:%M:%S"))
    minutes = round((moment - (time.time() if now is None else now)) / 60)
    if minutes < 1:
        return "in under a minute"
    return f"in {minutes} min" if minutes < 120 else f"in {round(minutes / 60)} h"


def _quoted(pattern: str) -> str:
    """`pattern` as a shell word (shlex.quote's rule, without loading shlex in every edit)."""
    return "'" + pattern.replace("'", "'\\''") + "'"

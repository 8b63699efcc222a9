"""Before a commit (and an edit, on a daemon from before section 11): is any of these files
exclusively reserved by another agent?

Paths are asked about relative to the top of the worktree they are in, so a
reservation covers a file in every worktree of the repository. A file in
another repository (one nested in this one, a submodule) is asked about on
that repository's board, relative to its top (`hooks.files.groups`). The
pre-edit hook itself asks `file.guard` (`hooks/edits.py`).

A guard that cannot ask the board (no daemon answers, several boards are live
and the socket was not given, the daemon fails the call) allows, by default,
and says so where the agent and its user read (issue 43): a hook never bricks
an agent. A repository that would rather stop than go on unchecked says
`"unreachable": "deny"` in its `.coord/config.json`; `COORD_GUARD_STRICT`
overrides that file on one machine or for one command (`unreachable_policy`).
A daemon that answers for another board than the tab's is not "unreachable":
it is refused, always (`boards.py`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

import msgspec

from coordd_client import boards
from coordd_client.client import Client
from coordd_wire.bounds import path_chunks
from coordd_wire.errors import CoordError, SeveralBoards, WrongBoard
from coordd_wire.wire import PathConflict

#: `1`: deny instead of allow when the daemon cannot be asked; `0`: allow. Either wins
#: over the repository's `"unreachable"` (a person must be able to get unstuck, or be
#: stricter, without changing a committed file); unset or anything else: the file decides.
STRICT_ENV = "COORD_GUARD_STRICT"
#: Seconds a guard waits for the daemon: hosts give hooks a few seconds at most.
GUARD_TIMEOUT_S = 3.0


class Verdict(msgspec.Struct, frozen=True):
    allowed: bool
    reason: str
    #: Set when the daemon could not be asked (the verdict then follows the failure policy).
    unreachable: str | None = None
    #: Set when the daemon serves another board than the tab's (`boards.py`): refused.
    wrong_board: bool = False


class Policy(msgspec.Struct, frozen=True):
    """What a guard does when it cannot ask the board, and what decided it."""

    deny: bool
    #: Named in a refusal: `COORD_GUARD_STRICT=1`, or the file that says "deny".
    source: str = ""


def unreachable_policy(projects: Iterable[str], environ: Mapping[str, str] | None = None) -> Policy:
    """`STRICT_ENV` when it says `1` or `0`; else "deny" if any of `projects` asks for it
    in its `.coord/config.json` (the repository that wants protection gets it), else allow.

    Read only when a guard cannot ask the board: the usual edit never pays for it.
    """
    value = (os.environ if environ is None else environ).get(STRICT_ENV)
    if value in ("0", "1"):
        return Policy(value == "1", f"{STRICT_ENV}={value}")
    from coordd_apps.hooks.files import CONFIG_FILE, repository_config

    for project in projects:
        if repository_config(project).unreachable == "deny":
            return Policy(True, f'{os.path.join(project, CONFIG_FILE)} says "unreachable": "deny"')
    return Policy(False)


def cannot_check(
    failure: CoordError, projects: Iterable[str], *, strict: bool | None = None
) -> Verdict:
    """The verdict when the board could not be asked about `projects`' paths: allowed,
    saying so and what to do, unless the policy (or `strict`, when given) denies."""
    why = f"could not check reservations ({failure.message})"
    if strict is None:
        policy = unreachable_policy(projects)
    else:
        policy = Policy(strict, f"{STRICT_ENV}=1" if strict else "")
    if policy.deny:
        refused = f"{why}; refused until it can, as {policy.source}."
        return Verdict(False, _sentences(refused, remedy(failure)), why)
    unchecked = f"{why}; allowed UNCHECKED (no other agent's reservation or edit looked at)."
    return Verdict(True, _sentences(unchecked, remedy(failure)), why)


def remedy(failure: CoordError) -> str:
    """What a person does about a board that cannot be asked; "" for a refusal of several
    boards, whose message already says (pin the one you mean, or stop one)."""
    if isinstance(failure, SeveralBoards):
        return ""
    if failure.data.get("reason") == "timeout":
        # The daemon is up: telling the person to start it sends them the wrong way.
        return (
            "The daemon is running but did not answer in time (busy);"
            " `coord top` shows what it is doing, `coord doctor` in a terminal says more."
        )
    return (
        "Start the daemon (`coordd serve`) or give every tab its socket ($COORDD_SOCKET);"
        " `coord doctor` in a terminal says what is wrong."
    )


def _sentences(*parts: str) -> str:
    return " ".join(part for part in parts if part)


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
    lines: list[str] = []
    try:
        with Client(socket, timeout_s=GUARD_TIMEOUT_S) as client:
            boards.check(client)
            for project, asked in by_project.items():
                keys = list(asked)
                # One check takes at most MAX_CHECK_PATHS paths and MAX_PATH_SEGMENTS
                # segments (PROTOCOL.md section 10, 1.2 section 10a): a larger commit is
                # asked about in chunks, on one connection. Sent whole it was refused
                # with -32602 and read as "could not check": a fail-open.
                for chunk in path_chunks(keys):
                    found = client.check_paths(chunk, project=project, agent=agent).conflicts
                    held = [c for c in found if c.reservation.exclusive]
                    lines.extend(line(asked.get(c.path, c.path), c) for c in held)
    except WrongBoard as exc:  # reachable, and the wrong board: nothing to allow on
        return Verdict(False, exc.message, wrong_board=True)
    except CoordError as exc:
        return cannot_check(exc, by_project, strict=strict)
    if not lines:
        return Verdict(True, "")
    return Verdict(False, "; ".join(lines[:5]))


def line(path: str, conflict: PathConflict) -> str:
    """Why an edit of `path` is denied, said to the host's model (`advice.path_reserved`)."""
    from coordd_apps.wording import advice  # only on a denial: an allowed edit never loads it

    reservation = msgspec.structs.asdict(conflict.reservation)
    return advice.path_reserved(advice.Surface.HOOK, path, reservation)

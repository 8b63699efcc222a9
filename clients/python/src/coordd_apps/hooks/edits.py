"""The pre-edit hook's protection (docs/PROTOCOL-1.2.md section 11): one `file.guard` per
board, which denies an edit of a file another agent reserved or changed since this
agent read it, reserves the rest on first edit, and names other live agents' edits of
the same files in other worktrees.

A host that reports reads (Claude Code, Cursor) sends each file's content hash, so the
daemon can tell a stale write; Codex reports none, so it gets no stale-write verdict
(it could never record the re-read the denial asks for). A daemon without the feature
gets the old reservation check (`guard.check_projects`). A board that cannot be
asked (no daemon answers, several boards and no socket given) allows the edit
unchecked and tells the model and its user so, unless the repository or the
environment says deny (`guard.cannot_check`); a daemon of another board denies.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import msgspec

from coordd_apps.hooks import files, guard, links
from coordd_apps.hooks.payload import HookInput
from coordd_apps.wording.render_edits import other_line
from coordd_client import boards as boards_module
from coordd_client.client import Client
from coordd_wire.errors import CoordError, MethodNotFound, WrongBoard
from coordd_wire.wire_edits import GuardResult, StaleFile

#: Hosts whose hooks report reads, and so get the stale-write verdict.
READS_REPORTED = frozenset({"claude", "cursor"})
#: At most this many lines of other agents' edits in a pre-edit context.
OTHERS_SHOWN = 3
#: Said to the model after an unchecked edit: in a headless run it is the only reader.
TELL_THE_USER = "Mention this to the user: other agents may be editing the same files."


class Protection(msgspec.Struct, frozen=True):
    """A pre-edit verdict, with what the model should be told if the edit goes on."""

    allowed: bool
    reason: str
    #: Set when the daemon could not be asked (the verdict then follows the failure policy).
    unreachable: str | None = None
    #: Said to the model on an allowed edit: warnings, other agents' edits, or that
    #: the edit went ahead unchecked.
    context: str = ""


def protect(locate: Callable[[], os.PathLike[str] | str], given: HookInput) -> Protection:
    """The verdict for the edit `given` describes (its paths are not empty).

    `locate` gives the socket; it is called only for an edit of a board's file, and
    may raise (`SeveralBoards`: which board cannot be told), which counts as a board
    that cannot be asked.
    """
    unnamable = [p for p in (given.cwd, *given.paths) if "\0" in p]
    if unnamable:
        shown = ", ".join(repr(p) for p in unnamable[:3])
        return Protection(False, f"{shown} contains a NUL byte, which no file name can hold")
    agent, project = given.agent.value, given.project.value
    boards = files.groups(given.paths, cwd=given.cwd, project=project)
    if not boards:
        return Protection(True, "")
    hashed = given.host in READS_REPORTED
    denials: list[str] = []
    notes: list[str] = []
    try:
        socket = locate()
        with Client(socket, timeout_s=guard.GUARD_TIMEOUT_S) as client:
            boards_module.check(client)
            for board in boards:
                denied, said = _guard_board(client, socket, board, agent, hashed)
                denials += denied
                notes += said
    except WrongBoard as exc:  # not unreachable: reachable, and the wrong one
        return Protection(False, exc.message)
    except CoordError as exc:
        return _cannot_check(exc, [board.project for board in boards])
    if denials:
        return Protection(False, "; ".join(denials[:5]))
    return Protection(True, "", context="\n".join(notes))


def _guard_board(
    client: Client, socket: os.PathLike[str] | str, board: files.Group, agent: str, hashed: bool
) -> tuple[list[str], list[str]]:
    """One board's `file.guard`: its denials and its notes for the model. A file with
    other names (hard links) has the reserved ones guarded with it (`links.py`)."""
    shown = dict(board.paths)
    on_disk = dict(board.files)
    notes: list[str] = []
    linked = links.multiply_linked(board.files)
    if linked:
        reserved = client.reservations(project=board.project).reservations
        found_links = links.reserved_links(board.worktree, linked, (r.pattern for r in reserved))
        for alias, key in found_links.reserved.items():
            shown[alias] = f"{alias} (the same file as {board.paths[key]}: a hard link)"
            on_disk[alias] = os.path.join(board.worktree, alias)
        notes += [links.unseen_note(board.paths[k], n) for k, n in found_links.unseen.items()]
    keys = list(shown)
    hashes = [files.content_hash(on_disk[k]) for k in keys] if hashed else None
    config = files.repository_config(board.project)
    try:
        found = client.file_guard(
            keys,
            worktree=board.worktree,
            agent=agent,
            project=board.project,
            hashes=hashes,
            auto_reserve=config.auto_reserve,
            ttl_s=config.ttl_s,
        )
    except MethodNotFound:  # a daemon from before section 11
        old = guard.check_projects(socket, {board.project: shown}, agent=agent)
        return ([] if old.allowed else [old.reason]), notes
    return _denials(found, shown), notes + _notes(found, shown, board.project)


def _cannot_check(failure: CoordError, projects: list[str]) -> Protection:
    verdict = guard.cannot_check(failure, projects)
    if not verdict.allowed:
        return Protection(False, verdict.reason, verdict.unreachable)
    told = f"coord: {verdict.reason} {TELL_THE_USER}"
    return Protection(True, verdict.reason, verdict.unreachable, context=told)


def _denials(found: GuardResult, shown: dict[str, str]) -> list[str]:
    lines = [guard.line(shown.get(c.path, c.path), c) for c in found.conflicts]
    # Named as the board names it (relative to the worktree's top), as the issue words it.
    lines += [_stale(s.path, s) for s in found.stale]
    return lines


def _stale(path: str, stale: StaleFile) -> str:
    # The shape: "src/x.py changed by codex-3 at 14:02Z since you read it; ..."
    return (
        f"{path} changed by {stale.agent} at {stale.at[11:16]}Z since you read it;"
        " read it again, then edit"
    )


def _notes(found: GuardResult, shown: dict[str, str], project: str) -> list[str]:
    notes = [
        f"coord: {shown.get(path, path)} changed since you last read it, and no agent's"
        " edit explains it (a human, a formatter?); read it again if unsure (said once)"
        for path in found.unrecorded
    ]
    notes += [other_line(edit, project) for edit in found.others[:OTHERS_SHOWN]]
    return notes

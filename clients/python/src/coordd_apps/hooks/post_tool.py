"""After a tool ran (or, on Cursor, before a file is read): record what it did, so the
next pre-edit knows who changed what (docs/PROTOCOL-1.2.md section 11).

One entry point, `record`, which the hook runner calls for the `post-tool` event:
Claude Code's PostToolUse on its edit tools and on Read, Codex's PostToolUse on
`apply_patch`, Cursor's `afterFileEdit` and `beforeReadFile`. An edit is recorded
with each file's content hash after it (a deleted file: ""), and appends
`file.edited`; a read with the hash of what was read. A failure is one line on
stderr, and returned (the runner tells the model once per outage: `reported.py`):
recording never blocks an agent.

A read also says who changed the file since the agent last saw it (issue 47 item
5): Claude Code refuses a write to a file changed since it was read by itself,
before any hook runs, with "File has been modified since read, either by the
user or by a linter" and nothing on who; the re-read it asks for is where the
model learns who (`changed_lines`, said in the PostToolUse context).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from coordd_apps.hooks import files, guard
from coordd_apps.hooks.payload import HookInput
from coordd_client.client import Client
from coordd_wire.errors import CoordError, MethodNotFound
from coordd_wire.wire_edits import StaleFile

#: The tools (and Cursor events) that read a file rather than change it.
READ_TOOLS = frozenset({"Read", "read_file"})
CURSOR_READ_EVENT = "beforeReadFile"


def record(
    locate: Callable[[], os.PathLike[str] | str], given: HookInput
) -> tuple[CoordError | None, str]:
    """Record the tool call's edits or reads; always let the host go on. Returns why
    the board could not be told (None: told, or nothing to tell it), and what to tell
    the model ("" or, after a read, who changed the file since it last saw it).
    `locate` gives the socket, only when there is something to record; it may raise
    (`SeveralBoards`)."""
    raw = given.raw
    event = raw.get("hook_event_name")
    reading = raw.get("tool_name") in READ_TOOLS or event == CURSOR_READ_EVENT
    paths = list(given.paths)
    top = raw.get("file_path")  # Cursor's file events name the file at the top level
    if isinstance(top, str) and top and top not in paths:
        paths.append(top)
    paths = [p for p in paths if "\0" not in p]
    failure: CoordError | None = None
    said = ""
    if paths and "\0" not in given.cwd:
        try:
            said = changed_lines(_send(locate, given, paths, reading=reading))
        except MethodNotFound:
            pass  # a daemon from before section 11 records nothing: nothing to say
        except CoordError as exc:
            sys.stderr.write(f"coord: could not record the {_what(reading)} ({exc.message})\n")
            failure = exc
    if given.host == "cursor" and event == CURSOR_READ_EVENT:
        sys.stdout.write('{"permission": "allow"}\n')  # beforeReadFile must answer
    return failure, said


def changed_lines(changed: list[StaleFile]) -> str:
    """What a read tells the model of others' edits since its last read (stale's words)."""
    return "\n".join(
        f"coord: {c.path} was changed by {c.agent} at {c.at[11:16]}Z since you last read it"
        " (what you just read includes it)"
        for c in changed
    )


def _what(reading: bool) -> str:
    return "read" if reading else "edit"


def _send(
    locate: Callable[[], os.PathLike[str] | str],
    given: HookInput,
    paths: list[str],
    *,
    reading: bool,
) -> list[StaleFile]:
    """Record; returns what a read found changed by others (named as the board names it,
    relative to the worktree's top, as the stale-write deny names it)."""
    agent = given.agent.value
    boards = files.groups(paths, cwd=given.cwd, project=given.project.value)
    changed: list[StaleFile] = []
    if not boards:
        return changed
    with Client(locate(), timeout_s=guard.GUARD_TIMEOUT_S) as client:
        for board in boards:
            keys = list(board.paths)
            hashes = [files.content_hash(board.files[k]) for k in keys]
            send = client.record_read if reading else client.record_edit
            done = send(keys, hashes, worktree=board.worktree, agent=agent, project=board.project)
            changed += done.changed
    return changed

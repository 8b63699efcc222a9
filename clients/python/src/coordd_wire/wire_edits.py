"""Wire types of docs/PROTOCOL-1.2.md section 11 (issue 33): file edits and the pre-edit verdict.

Beside `wire.py` (near its size bound); the same style: frozen, keyword-only
Structs the clients decode results into.
"""

from __future__ import annotations

import msgspec

from coordd_wire.wire import PathConflict, Reservation


class FileEdit(msgspec.Struct, frozen=True, kw_only=True):
    """A recorded edit: who last changed `path` (relative to the project) in which worktree."""

    path: str
    worktree: str
    agent: str
    at: str


class StaleFile(msgspec.Struct, frozen=True, kw_only=True):
    """A path changed by `agent`'s recorded edit at `at`, since the caller read or wrote it."""

    path: str
    agent: str
    at: str


class GuardResult(msgspec.Struct, frozen=True, kw_only=True):
    """`file.guard`: the verdict, and what the call reserved, renewed and found."""

    allowed: bool
    #: Exclusive reservations of other agents covering a path (a deny).
    conflicts: list[PathConflict]
    #: Paths another agent changed since the caller last read or wrote them (a deny).
    stale: list[StaleFile]
    #: Paths changed by nobody's recorded edit (warned once: the content is the baseline now).
    unrecorded: list[str]
    #: Reservations taken now (automatic, exclusive, one per path).
    reserved: list[Reservation]
    #: The task they are bound to (the caller's one claim), or None: bound to the session.
    task_id: int | None
    #: The caller's automatic reservations in the project renewed by this call.
    renewed: int
    #: Other live agents' edits of these paths in other worktrees, newest first.
    others: list[FileEdit]


class RecordResult(msgspec.Struct, frozen=True, kw_only=True):
    recorded: int
    #: `file.record_read` only: what another agent changed since the caller last read or
    #: wrote it (empty from a daemon that does not say).
    changed: list[StaleFile] = msgspec.field(default_factory=list)


class RecentResult(msgspec.Struct, frozen=True, kw_only=True):
    edits: list[FileEdit]

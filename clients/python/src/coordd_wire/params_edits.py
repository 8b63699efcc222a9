"""Params of the 1.2 `file.*` methods (docs/PROTOCOL-1.2.md section 11, issue 33).

Kept apart from `params.py`, which is near its size bound; the base, the
shared types and `meta` are that module's, so the rules (strict fields,
printable agents, `null` meaning omitted) are the same.
"""

from __future__ import annotations

from typing import Annotated

from coordd_wire import bounds
from coordd_wire.params import (
    Agent,
    Params,
    Project,
    TtlSeconds,
    check_path_segments,
    meta,
)
from coordd_wire.patterns import BadPattern, relative_path

EditPath = Annotated[str, meta(bounds.CHECK_PATH)]
EditPaths = Annotated[list[EditPath], meta(bounds.EDIT_PATHS)]
Worktree = Annotated[str, meta(bounds.WORKTREE)]
ContentHash = Annotated[str, meta(bounds.CONTENT_HASH)]
Hashes = Annotated[list[ContentHash], meta(bounds.EDIT_PATHS)]
RecentLimit = Annotated[int, meta(bounds.RECENT_LIMIT)]

#: A session-bound automatic reservation lives this long past the tab's last edit.
DEFAULT_AUTO_TTL_S = 1800.0
DEFAULT_RECENT_LIMIT = 50


def normal_worktree(given: str) -> str:
    """`given` with empty and `.` segments and a trailing `/` dropped: the stale-write
    verdict keys on this string, and `W/` or `W/.` must not miss what `W` records. A
    `..` is refused, not collapsed: which directory it names depends on symlinks the
    daemon cannot see (in team mode it is on another machine)."""
    if not given.startswith("/"):
        raise ValueError("`worktree` must be an absolute path - at `$.worktree`")
    parts = [part for part in given.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise ValueError("`worktree` may not contain `..`: resolve it first - at `$.worktree`")
    return "/" + "/".join(parts)


class _FileParams(Params):
    """What every `file.*` write names: who, on which board, in which worktree, which paths.

    Paths are checked as `reservation.check`'s are (relative to the project root, or
    absolute inside it; no empty, `.` or `..` segment) and kept relative (`relative`).
    `worktree` is kept normal (`normal_worktree`).
    `hashes`, when given, is one per path, in the same order.
    """

    agent: Agent
    project: Project
    worktree: Worktree
    paths: EditPaths
    hashes: Hashes | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        self.worktree = normal_worktree(self.worktree)
        check_path_segments(self.paths)
        for index, given in enumerate(self.paths):
            try:
                relative_path(given, self.project)
            except BadPattern as exc:
                raise ValueError(f"{exc} - at `$.paths[{index}]`") from None
        if self.hashes is not None and len(self.hashes) != len(self.paths):
            raise ValueError(
                f"`hashes` has {len(self.hashes)} entries for {len(self.paths)} paths:"
                " give one per path, in order - at `$.hashes`"
            )

    @property
    def relative(self) -> list[str]:
        """The paths relative to the project root, duplicates kept (they pair with `hashes`)."""
        return [relative_path(given, self.project) for given in self.paths]


class GuardParams(_FileParams):
    """`file.guard`: the pre-edit hook's one round trip."""

    #: Reserve what is about to change (False: advisory mode, nothing reserved).
    auto_reserve: bool | None = None
    #: Seconds a session-bound automatic reservation lives past the last edit.
    ttl_s: TtlSeconds | None = None


class RecordEditParams(_FileParams):
    """`file.record_edit`: the post-edit hook. `hashes` are the contents after the edit."""

    hashes: Hashes


class RecordReadParams(_FileParams):
    """`file.record_read`: a host that reports reads; `hashes` are what was read."""

    hashes: Hashes


class RecentParams(Params):
    """`file.recent`: recorded edits, newest first (the board's "who else is editing")."""

    project: Project
    agent: Agent | None = None
    limit: RecentLimit | None = None

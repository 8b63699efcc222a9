"""Hard links and the pre-edit guard: an edit through one name of a file changes every
name it has, and a reservation names a path.

Symlinks are resolved before a path reaches the board (`files.groups`), but a hard
link is the same inode under another name, and the other names can be found only
by scanning the file system. What is sound and cheap, and done here: for an edited
file with more than one name (`st_nlink > 1`, a regular file), each *literal*
reserved path of the board is looked up in the same worktree, and one that is the
same inode (`st_dev`, `st_ino`) is guarded too, so its reservation refuses the edit
as if it were named. Names this cannot see (a file under a reserved directory, one
covered only by a wildcard pattern, one in another worktree or outside the
repository) are not searched for; when some names stay unaccounted for, the edit
goes on and the model is told that the file has other names coord did not check.

Only files with several names cost anything: one `reservation.list` per board, and
one `stat` per literal reserved path.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

import msgspec

#: Characters that make a reservation pattern a wildcard one (gitignore's wildmatch).
WILDCARDS = frozenset("*?[\\")


class Links(msgspec.Struct, frozen=True):
    """What the reservations say about an edit's multiply-linked files."""

    #: {a reserved path (the path, not its escaped pattern): the edited path it is a
    #: hard link of}
    reserved: dict[str, str]
    #: Edited paths with other names that none of the reserved paths accounts for:
    #: {edited path: how many such names}.
    unseen: dict[str, int]


def multiply_linked(files: dict[str, str]) -> dict[str, os.stat_result]:
    """The edited files (board path: absolute path) that are regular files with more
    than one name; usually none, and then the guard asks nothing more."""
    found: dict[str, os.stat_result] = {}
    for key, absolute in files.items():
        try:
            status = os.stat(absolute)
        except OSError:
            continue  # a new file has one name, or none yet
        if stat.S_ISREG(status.st_mode) and status.st_nlink > 1:
            found[key] = status
    return found


def literal_path(pattern: str) -> str | None:
    """The one path `pattern` matches, or None for a wildcard pattern. A reserved name
    with glob characters is stored escaped (an edit of `src/[id].tsx` reserves
    `src/\\[id].tsx`), so escapes are undone rather than taken for wildcards."""
    path: list[str] = []
    escaped = False
    for char in pattern:
        if escaped:
            path.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in WILDCARDS:
            return None
        else:
            path.append(char)
    return None if escaped else "".join(path)


def reserved_links(
    worktree: str, linked: dict[str, os.stat_result], patterns: Iterable[str]
) -> Links:
    """Which literal reserved paths of `worktree` are other names of the `linked` files."""
    inodes = {(s.st_dev, s.st_ino): key for key, s in linked.items()}
    reserved: dict[str, str] = {}
    for pattern in {p.strip("/") for p in patterns}:
        path = literal_path(pattern)
        if path is None or path in linked:
            continue  # a wildcard pattern, or the edited name itself
        try:
            status = os.stat(os.path.join(worktree, path), follow_symlinks=False)
        except (OSError, ValueError):
            continue
        key = inodes.get((status.st_dev, status.st_ino))
        if key is not None:
            reserved[path] = key  # the path, which the guard is asked about
    unseen = {}
    for key, status in linked.items():
        others = status.st_nlink - 1 - sum(1 for k in reserved.values() if k == key)
        if others > 0:
            unseen[key] = others
    return Links(reserved, unseen)


def unseen_note(shown: str, others: int) -> str:
    """Said to the model when an edited file has names the guard could not look at."""
    names = "another name" if others == 1 else f"{others} other names"
    return (
        f"coord: {shown} has {names} (hard links); coord checked the reserved files of"
        " this worktree by name, not a name under a reserved directory or pattern"
        " elsewhere: this edit changes the file under every name"
    )

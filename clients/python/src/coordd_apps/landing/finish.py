"""Finish a checkout left half-way from one commit to the next (`checkout.py` decides when).

Git gives no way to write thousands of files atomically, and a `read-tree -u`
cut short leaves no record of where it stopped. None is needed: each path the
move changes is looked at in the worktree, and is the move's doing when it is
in a state the move passes through: its old content, its new content,
missing (git unlinks a file before it writes the new one), or a cut-short
start of its new content. Those are brought to the new state (index entries
by `git reset <new> -- <paths>`, files by `git checkout-index -f`, deletions
by unlink). A path in none of those states was changed by someone else since:
then nothing is written, and the error names the files and what to do. Paths
the move does not change are never written. Every step can itself be cut
short and run again: every path stays in one of those states.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from coordd_apps.landing import git
from coordd_apps.wording.advice import plural

#: How many of the files a person changed an error names.
_NAMED = 8
_ZERO_MODE = "000000"
_GITLINK = "160000"
_REGULAR = {"100644", "100755"}


class CheckoutLeft(git.GitFailed):
    """A half-updated checkout that only a person can finish; the message says how."""


@dataclass(frozen=True)
class _Change:
    path: str
    old: tuple[str, str] | None  # (mode, blob) in the old commit, None: absent
    new: tuple[str, str] | None


def finish(holder: Path, old: str, new: str, fd: int) -> int:
    """Bring every path the move from `old` to `new` changes to its new state, if each is
    in a state the move leaves; how many were not new yet. Else `CheckoutLeft`."""
    changes = _changes(holder, old, new)
    current = _worktree_states(holder, changes)
    # Where git ignores the executable bit (core.fileMode false), so does the comparison.
    exec_bits = git.git(holder, "config", "--bool", "core.fileMode", check=False) != "false"
    stale: list[_Change] = []
    foreign: list[str] = []
    for change in changes:
        got = current.get(change.path)
        if _matches(change.new, got, exec_bits):
            continue
        if got is None or _matches(change.old, got, exec_bits) or _cut_short(holder, change):
            stale.append(change)
        else:
            foreign.append(change.path)
    if foreign:
        verb = "was" if len(foreign) == 1 else "were"
        edited = f"{plural(len(foreign), 'file')} it changes {verb} edited"
        named = ", ".join(foreign[:_NAMED]) + (" ..." if len(foreign) > _NAMED else "")
        raise CheckoutLeft(
            f"the checkout in {holder} is half-way from {old[:12]} to {new[:12]} (an"
            f" interrupted landing), and {edited} since: {named}. Nothing was written."
            " Save what you want of them, then"
            f" `git checkout {new[:12]} -- <those files>` there and `coord land --recover`"
        )
    paths = "\0".join(c.path for c in changes)
    git.git(holder, "--literal-pathspecs", "reset", "-q", new, "--pathspec-from-file=-",
            "--pathspec-file-nul", stdin=paths, keep_fd=fd)  # fmt: skip
    for change in stale:
        if change.new is None:
            _unlink(holder, change.path)
    write = [c.path for c in stale if c.new is not None and c.new[0] != _GITLINK]
    if write:
        git.git(holder, "checkout-index", "-f", "-z", "--stdin", stdin="\0".join(write),
                keep_fd=fd)  # fmt: skip
    git.git(holder, "update-index", "-q", "--refresh", check=False, keep_fd=fd)
    return len(stale)


def _changes(holder: Path, old: str, new: str) -> list[_Change]:
    """What the move changes, path by path (`git diff-tree -r`, renames as delete + add)."""
    out = git.git(holder, "diff-tree", "-r", "-z", "--no-renames", old, new)
    fields = out.split("\0")
    changes = []
    for at in range(0, len(fields) - 1, 2):
        head, path = fields[at], fields[at + 1]
        old_mode, new_mode, old_blob, new_blob, _ = head.lstrip(":").split(" ")
        changes.append(
            _Change(
                path,
                None if old_mode == _ZERO_MODE else (old_mode, old_blob),
                None if new_mode == _ZERO_MODE else (new_mode, new_blob),
            )
        )
    return changes


def _worktree_states(holder: Path, changes: list[_Change]) -> dict[str, tuple[str, str]]:
    """(mode, blob) of each changed path as it is in the worktree; absent: missing, or a
    directory where a file may be."""
    found: dict[str, tuple[str, str]] = {}
    regular: list[tuple[str, str]] = []
    for change in changes:
        try:
            st = os.lstat(holder / change.path)
        except (FileNotFoundError, NotADirectoryError):
            continue
        if stat.S_ISLNK(st.st_mode):
            target = os.fsencode(os.readlink(holder / change.path))
            found[change.path] = ("120000", _hash(holder, target, change.path, filters=False))
        elif stat.S_ISREG(st.st_mode):
            regular.append((change.path, "100755" if st.st_mode & 0o100 else "100644"))
    plain = [(p, m) for p, m in regular if "\n" not in p and not p.startswith('"')]
    if plain:
        out = git.git(holder, "hash-object", "--stdin-paths",
                      stdin="".join(f"{p}\n" for p, _ in plain))  # fmt: skip
        for (path, mode), blob in zip(plain, out.split("\n"), strict=True):
            found[path] = (mode, blob)
    for path, mode in regular:
        if path not in found:
            data = (holder / path).read_bytes()
            found[path] = (mode, _hash(holder, data, path, filters=True))
    return found


def _matches(entry: tuple[str, str] | None, got: tuple[str, str] | None, exec_bits: bool) -> bool:
    """Whether the worktree's (mode, blob) is the commit's (None: absent)."""
    if entry is None or got is None:
        return entry is None and got is None
    if entry[1] != got[1]:
        return False
    return entry[0] == got[0] or (not exec_bits and {entry[0], got[0]} <= _REGULAR)


def _cut_short(holder: Path, change: _Change) -> bool:
    """Whether the file is a prefix of its new content: git's write of it was cut off."""
    if change.new is None or change.new[0] in (_GITLINK, "120000"):
        return False
    try:
        data = (holder / change.path).read_bytes()
    except OSError:
        return False
    blob = _bytes(holder, ["cat-file", "blob", change.new[1]])
    return len(data) < len(blob) and blob.startswith(data)


def _unlink(holder: Path, path: str) -> None:
    """Remove a file the move deletes, and the directories that leaves empty."""
    full = holder / path
    with contextlib.suppress(FileNotFoundError, IsADirectoryError, NotADirectoryError):
        if not full.is_dir() or full.is_symlink():
            full.unlink()
    parent = full.parent
    while parent != holder and parent.is_relative_to(holder):
        try:
            parent.rmdir()
        except OSError:
            break
        parent = parent.parent


def _hash(holder: Path, data: bytes, path: str, *, filters: bool) -> str:
    args = ["hash-object", "--stdin", f"--path={path}" if filters else "--no-filters"]
    return _bytes(holder, args, data).decode().strip()


def _bytes(cwd: Path, args: list[str], data: bytes = b"") -> bytes:
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_DIR", "GIT_WORK_TREE")}
    done = subprocess.run(
        ["git", *args], cwd=cwd, input=data, capture_output=True, env=env, check=False
    )
    if done.returncode != 0:
        raise git.GitFailed(f"git {' '.join(args)}: {done.stderr.decode(errors='replace')}")
    return done.stdout

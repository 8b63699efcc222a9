"""Move a target and its checkout under a journal, and finish a move that was cut short.

The swap of the target ref is atomic; the update of the worktree that has the
target checked out (`git read-tree -m -u old new`) is not, and git gives no
way to make thousands of file writes atomic. So the promise is kept the other
way round (`journal.py`): the move is journaled, and a move found interrupted
is finished, by the next `coord land` onto that target (before it touches
anything), by `coord land --recover`, or by the lander itself when git
refused midway. Finishing never needs to know where the dead lander stopped:

- the ref still at the old commit: the swap never happened, and the checkout
  was never touched (it is updated only after the swap); the journal goes.
- the ref at the new commit: each path the move changes is looked at in the
  worktree. A file in its old state, its new state, missing (git unlinks a
  file before writing its new content) or a cut-short prefix of its new
  content is the lander's doing, and is brought to the new state (index
  entries by `git reset <new> -- <paths>`, files by `git checkout-index -f`,
  deletions by unlink). A file in none of those states was changed by
  someone else since: nothing is written, and the error names the files and
  what to do. Paths the move does not change are never written.
- a stale lock git left (the target ref's `.lock` and the checkout's
  `HEAD.lock`, taken by the swap; the checkout's `index.lock`, taken by
  `read-tree`) is removed only when it is the lander's: the journal says the
  step that takes it had begun (`move`, `checkout`), the lock is no older than that
  step, every process of the landing is gone (the journal lock is free) and,
  where /proc shows it, no process has the lock open.

Each step of finishing can itself be interrupted and run again: every path
stays in one of the states above.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import msgspec

from coordd_client.landing import git, journal

#: How long a lander (or `--recover`) waits for a target's journal lock: the time a
#: git command a killed lander started may still take to end.
LOCK_WAIT_S = 120.0
#: How many of the files a person changed an error names.
_NAMED = 8
#: Clock slack when comparing an `index.lock`'s time with the journal's.
_SLACK_S = 2.0
_ZERO_MODE = "000000"
_GITLINK = "160000"


class CheckoutLeft(git.GitFailed):
    """A half-updated checkout that only a person can finish; the message says how."""


class SwapRefused(git.GitFailed):
    """The compare-and-swap of the target was refused: it moved since; nothing changed."""


@dataclass(frozen=True)
class _Change:
    path: str
    old: tuple[str, str] | None  # (mode, blob) in the old commit, None: absent
    new: tuple[str, str] | None


def move(
    repo: Path,
    *,
    onto: str,
    old: str,
    new: str,
    holder: Path | None,
    landing_id: int,
    say: Callable[[str], None],
) -> None:
    """Move `refs/heads/<onto>` from `old` to `new` (compare and swap), then the checkout
    in `holder`, journaled. A refused swap raises `GitFailed` (nothing moved); a
    checkout left behind raises `CheckoutLeft` (the ref moved, the journal stays)."""
    common = git.common_dir(repo)
    try:
        with journal.locked(common, onto, LOCK_WAIT_S) as fd:
            entry = journal.new_journal(onto=onto, old=old, new=new, worktree=holder,
                                        landing=landing_id)  # fmt: skip
            journal.write(common, onto, entry)
            try:
                git.move_ref(repo, onto, new, old, f"coord land #{landing_id}", keep_fd=fd)
            except git.GitFailed as exc:
                journal.remove(common, onto)  # refused: nothing moved
                raise SwapRefused(str(exc)) from None
            if holder is not None:
                entry = msgspec.structs.replace(entry, step="checkout", since=time.time())
                journal.write(common, onto, entry)
                _update(holder, old, new, fd, say)
            journal.remove(common, onto)
    except journal.LockBusy:
        raise git.GitFailed(_busy(common, onto)) from None


def _update(holder: Path, old: str, new: str, fd: int, say: Callable[[str], None]) -> None:
    """The checkout's half of a move, after the swap: `git read-tree`, or when git refuses
    midway, finishing what it began; whatever fails then is `CheckoutLeft` (the ref moved,
    so the landing stands)."""
    try:
        git.update_checkout(holder, old, new, keep_fd=fd)
    except git.GitFailed as exc:
        say(f"  git did not update the checkout in {holder} ({exc}); finishing it")
        try:
            _finish(holder, old, new, fd, say)
        except CheckoutLeft:
            raise
        except git.GitFailed as why:
            raise CheckoutLeft(f"{why}; `coord land --recover` finishes it") from None


def recover(repo: Path, onto: str | None, *, wait_s: float, say: Callable[[str], None]) -> int:
    """Finish the interrupted moves of `onto` (None: of every target); how many were
    found. A move whose lander (or a git command it started) still runs is left to it
    when `wait_s` is 0, else waited for that long, then `GitFailed`."""
    common = git.common_dir(repo)
    found = 0
    for target in [onto] if onto is not None else journal.targets(common):
        if journal.read(common, target) is None:
            continue
        try:
            with journal.locked(common, target, wait_s) as fd:
                entry = journal.read(common, target)
                if entry is None:
                    continue  # its lander finished meanwhile
                found += 1
                _recover_one(repo, common, target=target, entry=entry, fd=fd, say=say)
        except journal.LockBusy:
            if wait_s > 0:
                raise git.GitFailed(_busy(common, target)) from None
    return found


def _busy(common: Path, onto: str) -> str:
    entry = journal.read(common, onto)
    who = f"landing #{entry.landing} (pid {entry.pid})" if entry else "another landing"
    return (
        f"{who} is still moving {onto} or its checkout (it holds"
        f" {journal.lock_path(common, onto)}); land again when it has ended"
    )


def _recover_one(
    repo: Path,
    common: Path,
    *,
    target: str,
    entry: journal.Journal,
    fd: int,
    say: Callable[[str], None],
) -> None:
    who = f"landing #{entry.landing} (pid {entry.pid} on {entry.host})"
    holder = Path(entry.worktree) if entry.worktree else None
    if entry.step == "move":  # killed during the swap: git may have left the ref's lock,
        _clear_stale_lock(common / f"{entry.ref}.lock", entry, repo, say)
        if holder is not None and holder.is_dir():  # and HEAD's, where HEAD names the ref
            _clear_stale_lock(_git_path(holder, "HEAD.lock"), entry, holder, say)
    tip = git.resolve(repo, entry.ref)
    if tip != entry.new:
        if entry.step == "move":  # the swap never happened: nothing was touched
            journal.remove(common, target)
            say(f"  {who} was interrupted before it moved {target}: nothing to finish")
            return
        raise CheckoutLeft(
            f"{who} was interrupted moving the checkout of {target} from"
            f" {entry.old[:12]} to {entry.new[:12]}, and {target} has moved since (to"
            f" {tip[:12] or 'nothing'}): `git status` in {entry.worktree} shows what is"
            f" left; set it right by hand, then remove {journal.journal_path(common, target)}"
        )
    if holder is None or not _still_checked_out(holder, entry.ref):
        journal.remove(common, target)
        say(f"  {who} had moved {target}; no worktree has it checked out to finish")
        return
    if entry.step == "checkout":  # killed during `read-tree`: it may have left its lock
        _clear_stale_lock(_git_path(holder, "index.lock"), entry, holder, say)
    fixed = _finish(holder, entry.old, entry.new, fd, say)
    journal.remove(common, target)
    say(
        f"  finished the checkout of {target} in {holder} that {who} left half-updated:"
        f" {fixed} file(s) brought to {entry.new[:12]}"
    )


def _git_path(worktree: Path, name: str) -> Path:
    """A file of `worktree`'s own git dir (`.git/<name>`, or the linked worktree's)."""
    return Path(git.git(worktree, "rev-parse", "--path-format=absolute", "--git-path", name))


def _still_checked_out(holder: Path, ref: str) -> bool:
    if not holder.is_dir():
        return False
    return git.git(holder, "symbolic-ref", "--quiet", "HEAD", check=False) == ref


def _clear_stale_lock(
    lock: Path, entry: journal.Journal, where: Path, say: Callable[[str], None]
) -> None:
    """Remove a lock file (`index.lock`, `refs/heads/<target>.lock`) that the dead
    lander's git command left, and no other: one made before the journal's step began,
    or open in a running process, is someone else's, and stops the recovery."""
    try:
        made = lock.stat().st_mtime
    except FileNotFoundError:
        return
    if made < entry.since - _SLACK_S or _held_open(lock):
        raise CheckoutLeft(
            f"the move of {entry.ref} in {where} was interrupted, and {lock} is not the"
            f" interrupted lander's (older than its step, or open in a running process):"
            f" once no git command runs there, remove it and run `coord land --recover`"
        )
    lock.unlink()
    say(f"  removed {lock}, left by the interrupted landing #{entry.landing}")


def _held_open(path: Path) -> bool:
    """Whether a process has `path` open, where /proc tells (elsewhere: assume not; the
    journal lock already says no process of the landing runs)."""
    proc = Path("/proc")
    if not (proc / "self" / "fd").is_dir():
        return False
    wanted = str(path)
    for fds in proc.glob("[0-9]*/fd"):
        with contextlib.suppress(OSError):
            for fd in fds.iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd) == wanted:
                        return True
    return False


def _finish(holder: Path, old: str, new: str, fd: int, say: Callable[[str], None]) -> int:
    """Bring every path the move from `old` to `new` changes to its new state, if each is
    in a state the move leaves; how many were not new yet. Else `CheckoutLeft`."""
    changes = _changes(holder, old, new)
    current = _worktree_states(holder, changes)
    stale: list[_Change] = []
    foreign: list[str] = []
    for change in changes:
        got = current.get(change.path)
        if _matches(change.new, got):
            continue
        if got is None or _matches(change.old, got) or _cut_short(holder, change):
            stale.append(change)
        else:
            foreign.append(change.path)
    if foreign:
        named = ", ".join(foreign[:_NAMED]) + (" ..." if len(foreign) > _NAMED else "")
        raise CheckoutLeft(
            f"the checkout in {holder} is half-way from {old[:12]} to {new[:12]} (an"
            f" interrupted landing), and {len(foreign)} file(s) it changes were edited"
            f" since: {named}. Nothing was written. Save what you want of them, then"
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


def _matches(entry: tuple[str, str] | None, got: tuple[str, str] | None) -> bool:
    if entry is None or got is None:
        return entry is None and got is None
    return entry == got


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

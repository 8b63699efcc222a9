"""The git commands a landing runs, each a subprocess in one directory.

Nothing here talks to the daemon. Every command's failure is a `GitFailed`
carrying git's own words, which the lander reports as the landing's reason.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

#: Where landings keep their throwaway worktrees, inside the common git dir.
LANDING_DIR = "coord-land"
#: The lock reason of a landing worktree: which lander, on which machine, made it.
_LOCK_REASON = "coord land: pid {pid} on {host}"
_LOCK_PATTERN = re.compile(r"coord land: pid (\d+) on (\S+)")


class GitFailed(Exception):
    """A git command exited non-zero; the message is its stderr (or stdout)."""


@dataclass(frozen=True)
class Worktree:
    path: Path
    branch: str | None  # None: a detached HEAD
    locked: str | None = None  # the lock's reason ("" locked without one)


def git(
    cwd: Path, *args: str, check: bool = True, stdin: str | None = None, keep_fd: int = -1
) -> str:
    """Run `git args` in `cwd`; its stdout, stripped of the trailing newline. `keep_fd`:
    a descriptor the command inherits (a journal lock, held until it ends too)."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env=env, check=False,
        input=stdin, pass_fds=() if keep_fd < 0 else (keep_fd,),
    )  # fmt: skip
    if check and done.returncode != 0:
        said = without_progress(done.stderr or done.stdout).strip()
        raise GitFailed(f"git {' '.join(args)}: {said}")
    return done.stdout.rstrip("\n")


#: A progress report: "Updating files:  45% (1800/4000)", maybe ", done.".
_PROGRESS = re.compile(r"[A-Za-z][\w ]*:\s+\d+% \(\d+/\d+\)(, done\.)?\s*")


def without_progress(said: str) -> str:
    """What git said, less its progress reports: a failed command's message becomes the
    landing's reason, and a checkout of thousands of files reports dozens of them (each
    a line, or carriage returns within one)."""
    kept = []
    for line in said.splitlines():
        parts = [part for part in line.split("\r") if not _PROGRESS.fullmatch(part)]
        if parts:
            kept.append(parts[-1])
    return "\n".join(kept)


def valid_ref(cwd: Path, ref: str) -> bool:
    """Whether `ref` is a well-formed ref under `refs/` (`git check-ref-format`, which
    refuses `..`, a leading `/`, `.lock` components and the like)."""
    if not ref.startswith("refs/"):
        return False
    try:
        git(cwd, "check-ref-format", ref)
    except GitFailed:
        return False
    return True


def is_ancestor(cwd: Path, older: str, newer: str) -> bool:
    """Whether `older` is already in `newer`'s history (`git merge-base --is-ancestor`)."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    done = subprocess.run(
        ["git", "merge-base", "--is-ancestor", older, newer],
        cwd=cwd, capture_output=True, env=env, check=False,
    )  # fmt: skip
    return done.returncode == 0


def common_dir(cwd: Path) -> Path:
    return Path(git(cwd, "rev-parse", "--path-format=absolute", "--git-common-dir"))


def current_branch(cwd: Path) -> str:
    name = git(cwd, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    if not name:
        raise GitFailed("HEAD is detached here: name the branch to land")
    return name


def resolve(cwd: Path, ref: str) -> str:
    """The commit `ref` names, or "" when it names none."""
    return git(cwd, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)


def changed_paths(cwd: Path, onto: str, branch: str) -> list[str]:
    """What `branch` changes against its merge base with `onto` (renames: both names)."""
    base = git(cwd, "merge-base", onto, branch)
    out = git(cwd, "diff", "--name-only", "--no-renames", "-z", base, branch)
    return sorted(p for p in out.split("\0") if p)


def worktrees(cwd: Path) -> list[Worktree]:
    found: list[Worktree] = []
    path: Path | None = None
    branch: str | None = None
    locked: str | None = None
    for line in [*git(cwd, "worktree", "list", "--porcelain").splitlines(), ""]:
        if line.startswith("worktree "):
            path, branch, locked = Path(line.removeprefix("worktree ")), None, None
        elif line.startswith("branch refs/heads/"):
            branch = line.removeprefix("branch refs/heads/")
        elif line == "locked" or line.startswith("locked "):
            locked = line.removeprefix("locked").strip()
        elif not line and path is not None:
            found.append(Worktree(path, branch, locked))
            path = None
    return found


def checked_out(cwd: Path, branch: str) -> Path | None:
    """The worktree that has `branch` checked out, if any."""
    return next((w.path for w in worktrees(cwd) if w.branch == branch), None)


def is_clean(cwd: Path) -> bool:
    """No staged or unstaged change to a tracked file (untracked files are the user's)."""
    return not git(cwd, "status", "--porcelain", "--untracked-files=no")


def add_landing_worktree(cwd: Path, place: Path, start: str) -> None:
    """A detached worktree at `place`, locked with this process's id: a later lander's
    `sweep` leaves it alone while this lander may still run (stopped, say)."""
    reason = _LOCK_REASON.format(pid=os.getpid(), host=socket.gethostname())
    git(cwd, "worktree", "add", "--quiet", "--detach", "--lock", "--reason", reason,
        str(place), start)  # fmt: skip


def remove_worktree(cwd: Path, path: Path) -> None:
    git(cwd, "worktree", "remove", "--force", "--force", str(path), check=False)
    git(cwd, "worktree", "prune", check=False)


def sweep(cwd: Path) -> tuple[list[Path], list[Path]]:
    """Remove the landing worktrees that killed landers left; keep those whose lander
    still runs on this machine (a lander stopped past its lease, which will remove its
    own when it resumes and learns it was fenced out). Only the slot's holder runs this.
    Returns (removed, kept)."""
    root = common_dir(cwd) / LANDING_DIR
    left = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    locks = {w.path.resolve(): w.locked for w in worktrees(cwd)}
    removed: list[Path] = []
    kept: list[Path] = []
    for path in left:
        if _lander_runs(locks.get(path.resolve())):
            kept.append(path)
        else:
            remove_worktree(cwd, path)
            removed.append(path)
    return removed, kept


def _lander_runs(lock_reason: str | None) -> bool:
    """Whether the lander that locked a landing worktree may still be running: its process
    exists on this machine (a reused pid keeps a worktree too long, never too short)."""
    found = _LOCK_PATTERN.fullmatch(lock_reason or "")
    if found is None:
        return False  # not locked by a lander (an older coord): as before, remove it
    pid, host = int(found[1]), found[2]
    if host != socket.gethostname():
        return True  # another machine's lander: this one cannot tell, so it keeps it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def move_ref(cwd: Path, branch: str, new: str, old: str, why: str, *, keep_fd: int = -1) -> None:
    """Compare and swap: `refs/heads/<branch>` from `old` to `new`, refused if it moved."""
    git(cwd, "update-ref", "-m", why, f"refs/heads/{branch}", new, old, keep_fd=keep_fd)


def update_checkout(holder: Path, old: str, new: str, *, keep_fd: int = -1) -> None:
    """Bring a worktree whose branch moved from `old` to `new` (under it, by `move_ref`)
    up to date: the two-way merge a fast-forward does, refusing to overwrite a change.
    Not atomic: `checkout.py` finishes it when it was interrupted."""
    git(holder, "update-index", "-q", "--refresh", check=False, keep_fd=keep_fd)
    git(holder, "read-tree", "-m", "-u", old, new, keep_fd=keep_fd)

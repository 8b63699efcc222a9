"""The git commands a landing runs, each a subprocess in one directory.

Nothing here talks to the daemon. Every command's failure is a `GitFailed`
carrying git's own words, which the lander reports as the landing's reason.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

#: Where landings keep their throwaway worktrees, inside the common git dir.
LANDING_DIR = "coord-land"


class GitFailed(Exception):
    """A git command exited non-zero; the message is its stderr (or stdout)."""


@dataclass(frozen=True)
class Worktree:
    path: Path
    branch: str | None  # None: a detached HEAD


def git(cwd: Path, *args: str, check: bool = True) -> str:
    """Run `git args` in `cwd`; its stdout, stripped of the trailing newline."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env=env, check=False
    )
    if check and done.returncode != 0:
        said = (done.stderr or done.stdout).strip()
        raise GitFailed(f"git {' '.join(args)}: {said}")
    return done.stdout.rstrip("\n")


def is_ancestor(cwd: Path, older: str, newer: str) -> bool:
    """Whether `older` is already in `newer`'s history (`git merge-base --is-ancestor`)."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    done = subprocess.run(
        ["git", "merge-base", "--is-ancestor", older, newer],
        cwd=cwd, capture_output=True, env=env, check=False,
    )  # fmt: skip
    return done.returncode == 0


def top_level(cwd: Path) -> Path:
    return Path(git(cwd, "rev-parse", "--show-toplevel"))


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
    for line in [*git(cwd, "worktree", "list", "--porcelain").splitlines(), ""]:
        if line.startswith("worktree "):
            path, branch = Path(line.removeprefix("worktree ")), None
        elif line.startswith("branch refs/heads/"):
            branch = line.removeprefix("branch refs/heads/")
        elif not line and path is not None:
            found.append(Worktree(path, branch))
            path = None
    return found


def checked_out(cwd: Path, branch: str) -> Path | None:
    """The worktree that has `branch` checked out, if any."""
    return next((w.path for w in worktrees(cwd) if w.branch == branch), None)


def is_clean(cwd: Path) -> bool:
    """No staged or unstaged change to a tracked file (untracked files are the user's)."""
    return not git(cwd, "status", "--porcelain", "--untracked-files=no")


def remove_worktree(cwd: Path, path: Path) -> None:
    git(cwd, "worktree", "remove", "--force", str(path), check=False)
    git(cwd, "worktree", "prune", check=False)


def sweep(cwd: Path) -> list[Path]:
    """Remove the landing worktrees a killed lander left (only the slot's holder runs this)."""
    root = common_dir(cwd) / LANDING_DIR
    left = sorted(root.iterdir()) if root.is_dir() else []
    for path in left:
        remove_worktree(cwd, path)
    return left

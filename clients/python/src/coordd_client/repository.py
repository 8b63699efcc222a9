"""The repository and worktree around a directory: the top of its worktree and of its
repository's main worktree, read from git's own files where that is sure and asked
of git otherwise (`git_output`, which drops the variables naming one repository).

The project rule (`identity.resolve_project`: every worktree of one repository shares
the main worktree's board), the paths as the board sees them (`worktree`) and the
per-repository reserve-on-first-edit switch (`setup.auto_reserve`) all read it. Its
own module since issue 45: how git lays out a repository is not who is calling.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path


def main_worktree(cwd: str | os.PathLike[str] | None = None) -> str | None:
    """The top level of the main worktree of the repository around `cwd`, if any."""
    found = worktree_and_main(cwd)
    return found[1] if found is not None else None


def worktree_and_main(
    cwd: str | os.PathLike[str] | None = None,
) -> tuple[str | None, str | None] | None:
    """(the top of the worktree around `cwd`, the top of its repository's main worktree),
    from one git call; None outside any repository.

    `--git-common-dir` names the `.git` directory every worktree shares; its
    parent is the main worktree. A bare repository or a submodule (whose
    common dir is not named `.git`) falls back to this worktree's top level.
    One call for both: the edit guard asks about every file's directory, and
    each git process is a tenth of a Python start (issue 32).
    """
    if cwd is not None or not any(name in os.environ for name in REPOSITORY_ENV):
        read = _from_git_files(os.getcwd() if cwd is None else os.fspath(cwd))
        if not isinstance(read, _AskGit):
            return read
    out = git_output(
        cwd, "rev-parse", "--path-format=absolute", "--git-common-dir", "--show-toplevel"
    )
    if out is None:
        return None
    lines = out.splitlines()
    if not lines:
        return None
    top = lines[1] if len(lines) > 1 else None
    common = Path(lines[0])
    return top, str(common.parent) if common.name == ".git" else top


class _AskGit:
    """`_from_git_files` could not be sure: ask git."""


_ASK_GIT = _AskGit()
#: A worktree's top and its main worktree's top (`worktree_and_main`).
Tops = tuple[str | None, str | None]


def _from_git_files(cwd: str) -> Tops | _AskGit | None:
    """What `git rev-parse` would say of `cwd`'s worktree and main worktree, read from
    git's own files without a git process (a quick hook's biggest cost after its
    start, issue 46), or `_ASK_GIT` wherever the answer needs git's judgement.

    The common layouts only: a worktree whose `.git` is a directory (its top is the
    main worktree), or a linked worktree whose `.git` file names a `gitdir` with a
    `commondir` that is a `.git` directory. Git is asked instead whenever anything
    could make it answer otherwise: `$GIT_CEILING_DIRECTORIES` or
    `$GIT_DISCOVERY_ACROSS_FILESYSTEM`, a `.git` another user owns (git refuses it),
    one without `HEAD`, a directory inside a `.git`, a `core.worktree` or `bare`
    setting, a submodule (no
    `commondir`), a filesystem boundary crossed, a path it cannot read. A test
    compares it with git over every such layout.
    """
    if os.environ.get("GIT_CEILING_DIRECTORIES") or os.environ.get(
        "GIT_DISCOVERY_ACROSS_FILESYSTEM"
    ):
        return _ASK_GIT
    try:
        here = os.path.realpath(cwd)
        if ".git" in here.split(os.sep):
            return _ASK_GIT  # inside a git directory: no worktree, as git decides
        device = os.stat(here).st_dev
        while True:
            dot_git = os.path.join(here, ".git")
            if os.path.lexists(dot_git):
                return _read_dot_git(here, dot_git)
            parent = os.path.dirname(here)
            if parent == here:
                return None  # the root: no repository around `cwd`
            if os.stat(parent).st_dev != device:
                return _ASK_GIT
            here = parent
    except (OSError, ValueError, UnicodeDecodeError):
        return _ASK_GIT


def _read_dot_git(top: str, dot_git: str) -> Tops | _AskGit:
    """`top`'s worktree and main worktree from its `.git` (see `_from_git_files`)."""
    found = os.lstat(dot_git)
    if found.st_uid != os.geteuid():
        return _ASK_GIT
    if stat.S_ISDIR(found.st_mode):
        git_dir, linked = dot_git, False
    elif stat.S_ISREG(found.st_mode):
        with open(dot_git, encoding="utf-8") as text:
            line = text.read(4096).strip()
        if not line.startswith("gitdir: ") or "\n" in line:
            return _ASK_GIT
        git_dir, linked = os.path.join(top, line[len("gitdir: ") :]), True
    else:
        return _ASK_GIT
    if not os.path.isfile(os.path.join(git_dir, "HEAD")) or _config_says_otherwise(git_dir):
        return _ASK_GIT
    if not linked:
        return top, top
    commondir = os.path.join(git_dir, "commondir")
    if not os.path.isfile(commondir):
        return _ASK_GIT  # a submodule, or something else git knows better
    with open(commondir, encoding="utf-8") as text:
        common = os.path.realpath(os.path.join(git_dir, text.read(4096).strip()))
    if os.path.basename(common) != ".git" or _config_says_otherwise(common):
        return _ASK_GIT
    return top, os.path.dirname(common)


def _config_says_otherwise(git_dir: str) -> bool:
    """A `core.worktree` or `bare` setting (or an unreadable config): git decides."""
    try:
        with open(os.path.join(git_dir, "config"), encoding="utf-8") as text:
            config = text.read(1 << 20).lower()
    except FileNotFoundError:
        return False
    return "worktree" in config or "bare = true" in config or "bare=true" in config


#: What git exports to its hooks (and a user may export) to name *one* repository:
#: GIT_DIR set and GIT_WORK_TREE not makes git take the current directory for the
#: top of the worktree, whatever directory it is asked about. A question about a
#: given directory drops them, so git finds that directory's repository itself.
REPOSITORY_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_GRAFT_FILE",
)


def git_output(cwd: str | os.PathLike[str] | None, *args: str) -> str | None:
    """git's answer in `cwd` (the repository around it), or None.

    With no `cwd` the question is about the repository this process is in,
    as git itself sees it (in a git hook: the one being committed to).
    """
    env = None
    if cwd is not None:
        env = {k: v for k, v in os.environ.items() if k not in REPOSITORY_ENV}
    try:
        out = subprocess.run(
            ["git", *args],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
            cwd=cwd,
            env=env,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None

"""Paths as the board sees them: relative to the top level of the worktree they are in.

Parallel agents usually sit in separate worktrees of one repository, and the
board's project is the main worktree (`identity`). A reservation of
`src/auth.py` must cover that file in every worktree, so a path is asked
about relative to the top level of *its own* worktree, whichever that is.

A repository nested inside another (a plain nested clone, or a submodule)
is a project of its own: a file in it belongs to the board an agent working
in its directory is on (`repository.main_worktree` of that directory: the
nested repository's main worktree, a submodule's own top), and is named
relative to the nested repository's top (`board_location`). Never the outer
repository's board: there the same relative name is another file.
"""

from __future__ import annotations

import functools
import os

from coordd_client.repository import worktree_and_main


@functools.lru_cache(maxsize=256)
def _tops(directory: str) -> tuple[str | None, str | None]:
    """(`worktree_top`, `repository_project`) of `directory`: one git call for both."""
    found = worktree_and_main(directory)
    if found is None:
        return None, None
    top, main = found
    return (os.path.realpath(top) if top else None, os.path.realpath(main) if main else None)


def forget() -> None:
    """Drop what was learnt of directories' worktrees: a process that outlives one
    command (a quick worker) must see a worktree made or removed since."""
    _tops.cache_clear()


def worktree_top(directory: str) -> str | None:
    """The top level of the worktree containing `directory` (which must exist), if any."""
    return _tops(directory)[0]


def board_path(path: str, cwd: str | None = None) -> str:
    """`path` (relative to `cwd`, or absolute) relative to its worktree's top level.

    Outside any worktree it stays absolute (the daemon then checks it against
    the project). The file need not exist: the nearest existing directory
    above it decides.
    """
    absolute = os.path.realpath(os.path.join(cwd or os.getcwd(), path))
    directory = os.path.dirname(absolute)
    while directory and not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    top = worktree_top(directory or "/")
    if top is None or not (absolute + "/").startswith(top.rstrip("/") + "/") or absolute == top:
        return absolute
    return os.path.relpath(absolute, top)


def repository_project(directory: str) -> str | None:
    """The board of the repository containing `directory` (its main worktree), if any."""
    return _tops(directory)[1]


def _existing_directory(absolute: str) -> str:
    directory = os.path.dirname(absolute)
    while directory and not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    return directory or "/"


def board_location(path: str, cwd: str | None = None) -> tuple[str | None, str]:
    """(the project of the repository `path` is in, `board_path(path, cwd)`).

    The project is None outside any repository (the board path is absolute then).
    """
    key = board_path(path, cwd)
    if os.path.isabs(key):
        return None, key
    absolute = os.path.realpath(os.path.join(cwd or os.getcwd(), path))
    return repository_project(_existing_directory(absolute)), key


def relative_to_board(path: str, project: str) -> str:
    """An absolute path or pattern inside any worktree of `project`'s repository, made
    relative to its own worktree's top (as the hooks name it); anything else as given.

    For the surfaces that take paths from a model (`coord mcp`): an absolute path
    from a linked worktree is not under the main worktree, so the daemon would
    refuse it although it is the project's. A file of a repository nested in it
    is another board's and stays absolute (the daemon then judges it).
    """
    if not os.path.isabs(path) or "\0" in path:
        return path
    repository, key = board_location(path)
    if repository is not None and repository == os.path.realpath(project):
        return key
    return path

"""What the edit hooks know of the files a tool touches: where each is on the board, its
content hash, and the repository's switch for automatic reservations.

Shared by the pre-edit guard (`hooks/edits.py`) and the post-tool recorder
(`hooks/post_tool.py`), so the two name a file, and hash it, the same way.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import msgspec

from coordd_client.worktree import board_location, repository_project, worktree_top

#: The repository's own switch, at the project's directory (the main worktree's top), as
#: `.coord/PRIME.md` is: `{"auto_reserve": false}` is advisory mode (nothing reserved on
#: first edit; other agents' reservations and stale writes are still refused), and
#: `"auto_reserve_ttl_s": N` how long a session-bound one outlives the tab's last edit;
#: `"unreachable": "deny"` refuses edits and commits the guards cannot check (`guard.py`).
CONFIG_FILE = Path(".coord") / "config.json"
#: The values of the file's `"unreachable"` key.
UNREACHABLE_CHOICES = ("allow", "deny")
#: At most this much of the config file is read (it is the repository's: anyone who can
#: push decides what it is).
CONFIG_BYTES = 4096
#: Files larger than this are not hashed (a hook must stay fast); they are named by
#: size and modification time instead, which changes whenever the file does.
HASH_BYTES = 16 * 1024 * 1024


class Group(msgspec.Struct, frozen=True):
    """The paths of one tool call on one board, in one worktree."""

    project: str
    worktree: str
    #: {path as the board names it: path as the tool gave it}
    paths: dict[str, str]
    #: {board path: absolute path on disk}
    files: dict[str, str]


def groups(paths: list[str], *, cwd: str, project: str) -> list[Group]:
    """`paths` grouped by board and worktree (usually one group: one round trip).

    A file of the session's own repository is on `project`; a file of another
    repository (nested, a submodule) on that repository's board; a file outside
    every repository is nobody's here unless it lies under `project`.
    """
    own = repository_project(os.path.realpath(cwd)) if os.path.isdir(cwd) else None
    found: dict[tuple[str, str], Group] = {}
    for path in paths:
        absolute = os.path.realpath(os.path.join(cwd, path))
        repository, key = board_location(path, cwd)
        if repository is None:
            if not key.startswith(project.rstrip("/") + "/"):
                continue
            board, worktree = project, project
        else:
            board = project if repository == own else repository
            worktree = worktree_top(_existing(absolute)) or board
        group = found.setdefault((board, worktree), Group(board, worktree, {}, {}))
        group.paths[key] = path
        group.files[key] = absolute
    return list(found.values())


def _existing(absolute: str) -> str:
    directory = os.path.dirname(absolute)
    while directory and not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    return directory or "/"


def content_hash(absolute: str) -> str:
    """Hex SHA-256 of the file's bytes; "" when there is no such file."""
    try:
        fd = os.open(absolute, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            return ""  # a FIFO or device is not content (and reading it could block)
        if status.st_size > HASH_BYTES:
            return f"large:{status.st_size}:{status.st_mtime_ns}"
        digest = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
        return digest.hexdigest()
    except OSError:
        return ""
    finally:
        os.close(fd)


class Config(msgspec.Struct, frozen=True):
    """The repository's `CONFIG_FILE`, as far as the edit hooks read it."""

    auto_reserve: bool = True
    #: None: the daemon's default (docs/PROTOCOL-1.2.md section 11).
    ttl_s: float | None = None
    #: What a guard does when it cannot ask the board: "allow" (the default: a hook
    #: never bricks an agent) or "deny" (`guard.unreachable_policy`).
    unreachable: str = "allow"


def repository_config(project: str) -> Config:
    """The repository's switch (`CONFIG_FILE`): on unless it says `"auto_reserve": false`."""
    return read_config(project)[0]


def read_config(project: str) -> tuple[Config, str | None]:
    """The repository's `CONFIG_FILE` and, when it is there but not used as written, why.

    Read only as a regular file, and only `CONFIG_BYTES` of it. A file that is not
    JSON, or not an object, or a value of the wrong type, leaves the default, which
    protects (a hook must not fail on the repository's file); `coord doctor` says why
    (the daemon refuses a TTL out of its range, and the hook then allows, as on any error).
    """
    path = Path(project) / CONFIG_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return Config(), None
    except OSError as exc:
        return Config(), f"cannot be read ({exc.strerror})"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return Config(), "is not a regular file"
        raw = os.read(fd, CONFIG_BYTES + 1)
    except OSError as exc:
        return Config(), f"cannot be read ({exc.strerror})"
    finally:
        os.close(fd)
    if len(raw) > CONFIG_BYTES:
        return Config(), f"is over {CONFIG_BYTES} bytes"
    try:
        config = json.loads(raw)
    except ValueError as exc:
        return Config(), f"is not JSON ({exc})"
    except RecursionError:  # `[[[[...`: nested deeper than the parser goes
        return Config(), "is nested too deep to read"
    if not isinstance(config, dict):
        return Config(), 'is not a JSON object such as {"auto_reserve": false}'
    wrong = []
    switch = config.get("auto_reserve", True)
    if not isinstance(switch, bool):
        wrong.append("auto_reserve must be true or false")
    ttl = config.get("auto_reserve_ttl_s")
    if ttl is not None and (not isinstance(ttl, (int, float)) or isinstance(ttl, bool)):
        wrong.append("auto_reserve_ttl_s must be a number of seconds")
        ttl = None
    unreachable = config.get("unreachable", "allow")
    if unreachable not in UNREACHABLE_CHOICES:
        wrong.append('unreachable must be "allow" or "deny"')
        unreachable = "allow"
    found = Config(switch is not False, None if ttl is None else float(ttl), unreachable)
    return found, "; ".join(wrong) or None

"""The rendezvous: where every surface of one user finds that user's live boards.

Section 1 derives the socket from `$XDG_RUNTIME_DIR` and `$TMPDIR`, and the
default database from `$XDG_STATE_HOME`; hosts strip these from what they
give their children (Codex passes MCP servers a short list with no `XDG_*`
in it; Cursor curates; cron and login shells reset). A surface whose
environment differs from the daemon's derives another socket and, finding
nobody there, would start a second daemon on a second, empty board. So the
daemon also announces itself in a place that depends on the user's uid and
home directory only (docs/PROTOCOL-1.2.md section 1a):

    <home>/.local/state/coordd/daemons/<pid>.json
    (macOS: <home>/Library/Application Support/coordd/daemons/<pid>.json)

`<home>` is `$HOME` when it is an absolute path, else the home directory of
the uid's password entry. `$XDG_STATE_HOME` is never used here, as for the
tab registry (`tabs.py`). Each live daemon has one file, written atomically
once its socket is bound and removed at a clean stop: its pid and the
process's start time (a reused pid is another process), the socket it
serves, its board id (section 1b) and its store (a path, or a team DSN
without its password), and whether it is a board started on purpose beside
the user's (`separate`). A record whose process is gone (or is a zombie: dead,
not yet reaped) is stale: readers skip it and remove it. A daemon rewrites its
record, and the user's board record, if they are removed while it runs (a
user cleaning up `~/.local/state`), within `socket_check_interval_s`.

Every surface reads this directory on every call, so a read never waits: a
record is opened without following a symlink and without blocking, and read
only if it is a regular file, up to `MAX_RECORD_BYTES` (a FIFO or a device
planted here would otherwise hang every hook and `coordd serve` itself).

Beside it, `board` names **the user's board**: the store the last daemon
started as the user's own served (`coordd serve` with no `--store`, `--db`,
`$COORDD_STORE` or `$COORDD_DB`, or with no `--socket` or `$COORDD_SOCKET`).
A client that must start a daemon starts that store, so a surface with a
stripped environment starts the board the user's own shell would have
started, not a new one beside it; and when several boards are live, a
surface with no tab of its own means that one.

Nothing here trusts a record: a client still checks the socket is this
user's and answers before it uses it.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

import msgspec

#: More than any record takes (a socket path is at most 108 bytes; a DSN a few hundred).
MAX_RECORD_BYTES = 16384
SUFFIX = ".json"


class LiveDaemon(msgspec.Struct, frozen=True, kw_only=True):
    """One daemon's announcement."""

    pid: int
    #: The process's start time as the kernel counts it (`/proc/<pid>/stat` field 22);
    #: None where there is no `/proc` (macOS: the pid alone is checked).
    started: str | None
    socket: str
    board_id: str
    #: `sqlite:<path>`, or a team store's DSN without its password.
    store: str
    #: A board started on purpose beside the user's (`coordd serve` with its own store
    #: and socket): never the user's board, so no surface is sent to it unless its
    #: socket is given. Absent in an older daemon's record: False, the user's.
    separate: bool = False


class UsersBoard(msgspec.Struct, frozen=True, kw_only=True):
    """The store a client starts when it must start a daemon (see the module's doc)."""

    store: str
    board_id: str


def home_directory(environ: Mapping[str, str] | None = None) -> Path:
    """`$HOME` if it is absolute, else the password entry's home for this uid; raises
    `OSError` when there is neither (a uid with no entry, in a container)."""
    env = os.environ if environ is None else environ
    home = env.get("HOME", "")
    if home.startswith("/"):
        return Path(home)
    import pwd

    try:
        return Path(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        raise OSError(
            f"no home directory: $HOME is not set and uid {os.getuid()} has no password entry"
        ) from None


def home_state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """coordd's state directory as the home directory alone places it."""
    home = home_directory(environ)
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "coordd"
    return home / ".local" / "state" / "coordd"


def rendezvous_dir(environ: Mapping[str, str] | None = None) -> Path:
    return home_state_dir(environ) / "daemons"


def users_board_path(environ: Mapping[str, str] | None = None) -> Path:
    return home_state_dir(environ) / "board"


def _proc_stat(pid: int) -> list[str] | None:
    """The fields of `/proc/<pid>/stat` after the command's name (Linux), from the state
    (field 3) on; None where there is no such file."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read().decode(errors="replace")
    except (OSError, OverflowError, ValueError):
        return None
    return raw[raw.rindex(")") + 2 :].split()


def process_started(pid: int) -> str | None:
    """The kernel's start time of `pid` (Linux), to tell a reused pid from the original."""
    fields = _proc_stat(pid)
    return None if fields is None else fields[19]


#: `/proc/<pid>/stat` states of a process that has ended: a zombie (not reaped yet), dead.
_ENDED_STATES = frozenset("ZXx")


def process_alive(pid: int, started: str | None) -> bool:
    """Whether `pid` is a running process of this user that started at `started` (when
    known). A zombie has ended, though its pid still answers `kill(pid, 0)`: where
    `/proc` shows its state it is dead here; elsewhere (macOS) the pid alone is checked,
    and the readers rely on the socket answering."""
    try:
        os.kill(pid, 0)
    except (OSError, OverflowError, ValueError):  # gone, another user's, or no pid at all
        return False
    fields = _proc_stat(pid)
    if fields is None:
        return started is None
    return fields[0] not in _ENDED_STATES and started in (None, fields[19])


def _alive(record: LiveDaemon) -> bool:
    return process_alive(record.pid, record.started)


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    scratch = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(scratch, path)


def announce(record: LiveDaemon, environ: Mapping[str, str] | None = None) -> Path:
    """Write this daemon's record (the daemon's side); returns its path, to withdraw it."""
    path = rendezvous_dir(environ) / f"{record.pid}{SUFFIX}"
    _write_atomically(path, msgspec.json.encode(record) + b"\n")
    return path


def withdraw(path: Path) -> None:
    path.unlink(missing_ok=True)


def read_small_file(path: Path, limit: int = MAX_RECORD_BYTES) -> bytes | None:
    """`path`'s bytes if it is a regular file (not through a symlink) of at most `limit`
    bytes; else None, at once: a FIFO, a device or a socket is never waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        raw = os.read(fd, limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return raw if len(raw) <= limit else None


def _read(path: Path) -> LiveDaemon | None:
    raw = read_small_file(path)
    if raw is None:
        return None
    try:
        return msgspec.json.decode(raw, type=LiveDaemon)
    except msgspec.DecodeError:
        return None


def live_daemons(environ: Mapping[str, str] | None = None) -> list[LiveDaemon]:
    """This user's live daemons, oldest pid first; stale records are removed on the way."""
    try:
        directory = rendezvous_dir(environ)
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    found: list[LiveDaemon] = []
    for name in names:
        if not name.endswith(SUFFIX) or name.startswith("."):
            continue
        path = directory / name
        record = _read(path)
        if record is None:
            continue
        if _alive(record):
            found.append(record)
        else:
            withdraw(path)
    return sorted(found, key=lambda record: record.pid)


def record_users_board(board: UsersBoard, environ: Mapping[str, str] | None = None) -> None:
    _write_atomically(users_board_path(environ), msgspec.json.encode(board) + b"\n")


def users_board(environ: Mapping[str, str] | None = None) -> UsersBoard | None:
    """The user's board, if a daemon on its default store ever recorded one."""
    try:
        raw = read_small_file(users_board_path(environ))
    except OSError:  # no home either
        return None
    if raw is None:
        return None
    try:
        return msgspec.json.decode(raw, type=UsersBoard)
    except msgspec.DecodeError:
        return None


def describe(record: LiveDaemon) -> str:
    """One line naming a live daemon: its board, store, socket and pid."""
    kind = "separate board" if record.separate else "board"
    return f"{kind} {record.board_id} ({record.store}) on {record.socket}, pid {record.pid}"

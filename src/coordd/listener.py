"""The Unix listening socket: bind it safely, or adopt one from a service manager.

Trio has no Unix listener helper, so the socket is bound here (directory
0700, socket 0600 through the umask around bind, path length checked) and
wrapped in `trio.SocketListener` by the daemon.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from coordd.limits import Limits
from coordd_wire.record import format_store_record, store_record_path

# sun_path's size, including the terminating NUL: unix(7), and <sys/un.h> on macOS.
SUN_PATH_MAX = 104 if sys.platform == "darwin" else 108


class ListenerError(Exception):
    """The socket cannot be used: with a message for the user."""


class UnsafeSocketDirectory(ListenerError):
    """The socket's directory could let another user replace the socket."""


class DaemonAlreadyRunning(ListenerError):
    """A live daemon answers on the socket path."""


@dataclass
class BoundSocket:
    sock: socket.socket
    path: Path | None
    #: False for a socket a service manager handed us: never unlink or probe it.
    owned: bool
    #: The socket file's inode right after bind, to recognise it at exit.
    inode: int | None = None


def served_path(bound: BoundSocket) -> Path | None:
    """The absolute path clients reach this socket at (an adopted one's from its
    address), or None for an abstract or unnamed socket."""
    if bound.path is not None:
        return Path(os.path.abspath(bound.path))
    try:
        name = bound.sock.getsockname()
    except OSError:
        return None
    if isinstance(name, str) and name.startswith("/"):
        return Path(name)
    return None


def bind_unix_socket(path: Path) -> BoundSocket:
    encoded = os.fsencode(path)
    if len(encoded) >= SUN_PATH_MAX:
        raise ListenerError(
            f"socket path is {len(encoded)} bytes; the limit here is {SUN_PATH_MAX - 1}: {path}"
            " (use --socket or $COORDD_SOCKET with a shorter path)"
        )
    ensure_private_directory(path.parent)
    _replace_stale_socket(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)  # the socket is born 0600: no window where others can connect
    try:
        sock.bind(str(path))
    except OSError as exc:
        sock.close()
        raise ListenerError(f"cannot bind {path}: {exc.strerror}") from exc
    finally:
        os.umask(old_umask)
    sock.listen(Limits.listen_backlog)
    return BoundSocket(sock, path, owned=True, inode=os.stat(path).st_ino)


def ensure_private_directory(directory: Path) -> None:
    """Make sure nobody but us can add, replace or remove files in the socket's directory.

    With `$XDG_RUNTIME_DIR` unset the directory sits in a shared `/tmp`, where
    another user can create it first (world-writable) and later swap our
    socket for a listener of their own. So whichever way the path was
    chosen: a missing directory is created 0700; an existing one must be a
    real directory (not a symlink), owned by our uid, and writable by nobody
    else. One we did not create is never chmodded: the user decides.
    """
    if not os.path.lexists(directory):
        directory.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            directory.mkdir(mode=0o700)
            os.chmod(directory, 0o700)  # mkdir's mode is filtered by the umask
            return
        except FileExistsError:
            pass  # someone made it meanwhile: check it like any other
    info = os.lstat(directory)
    fix = "use a private directory (--socket, $COORDD_SOCKET or $XDG_RUNTIME_DIR)"
    if stat.S_ISLNK(info.st_mode):
        raise UnsafeSocketDirectory(f"socket directory {directory} is a symlink; {fix}")
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeSocketDirectory(f"socket directory {directory} is not a directory; {fix}")
    if info.st_uid != os.geteuid():
        raise UnsafeSocketDirectory(
            f"socket directory {directory} is owned by uid {info.st_uid}, not by this user"
            f" (uid {os.geteuid()}); another user may have planted it: {fix}"
        )
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafeSocketDirectory(
            f"socket directory {directory} is writable by group or others"
            f" (mode {stat.S_IMODE(info.st_mode):o}); `chmod 700 {directory}` or {fix}"
        )


def _replace_stale_socket(path: Path) -> None:
    """Unlink a socket left by a dead daemon; refuse if a live one answers."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise ListenerError(f"{path} is a symlink; refusing to bind through it")
    if not stat.S_ISSOCK(mode):
        raise ListenerError(f"{path} exists and is not a socket; refusing to replace it")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(str(path))
    except OSError as exc:
        if exc.errno not in (errno.ECONNREFUSED, errno.ENOENT):
            raise ListenerError(f"cannot probe existing socket {path}: {exc.strerror}") from exc
    else:
        raise DaemonAlreadyRunning(f"another coordd is already listening on {path}")
    finally:
        probe.close()
    path.unlink(missing_ok=True)


def socket_file_is_ours(bound: BoundSocket) -> bool:
    """Does the path still name the socket we bound (not deleted, not replaced)?"""
    if bound.path is None:
        return True
    try:
        info = os.lstat(bound.path)
    except OSError:
        return False
    return stat.S_ISSOCK(info.st_mode) and info.st_ino == bound.inode


def unlink_if_ours(bound: BoundSocket) -> None:
    """Remove our socket file at exit, unless it was adopted or already replaced."""
    if bound.owned and socket_file_is_ours(bound) and bound.path is not None:
        bound.path.unlink(missing_ok=True)


def record_store(bound: BoundSocket, location: str) -> None:
    """Write which store this socket serves beside it (`protocol.record.store_record_path`).

    Only for a socket we bound: a service manager's socket is restarted by
    the service manager, with its own configuration. Written to a temporary
    name and renamed, so a reader sees the old record or the new, never half.
    """
    if not bound.owned or bound.path is None:
        return
    target = store_record_path(bound.path)
    scratch = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, format_store_record(location))
    finally:
        os.close(fd)
    os.replace(scratch, target)


def remove_store_record(bound: BoundSocket) -> None:
    """At a clean stop the socket is free again: forget which store it served."""
    if bound.owned and bound.path is not None:
        store_record_path(bound.path).unlink(missing_ok=True)

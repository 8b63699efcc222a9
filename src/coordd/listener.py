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

# sun_path's size, including the terminating NUL: unix(7), and <sys/un.h> on macOS.
SUN_PATH_MAX = 104 if sys.platform == "darwin" else 108
#: Connections the kernel queues for us while the accept loop is busy.
LISTEN_BACKLOG = socket.SOMAXCONN


class ListenerError(Exception):
    """The socket cannot be used: with a message for the user."""


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


def bind_unix_socket(path: Path) -> BoundSocket:
    encoded = os.fsencode(path)
    if len(encoded) >= SUN_PATH_MAX:
        raise ListenerError(
            f"socket path is {len(encoded)} bytes; the limit here is {SUN_PATH_MAX - 1}: {path}"
            " (use --socket or $COORDD_SOCKET with a shorter path)"
        )
    directory = path.parent
    if not directory.exists():
        directory.mkdir(mode=0o700, parents=True)
        os.chmod(directory, 0o700)  # mkdir's mode is filtered by the umask
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
    sock.listen(LISTEN_BACKLOG)
    return BoundSocket(sock, path, owned=True, inode=os.stat(path).st_ino)


def _replace_stale_socket(path: Path) -> None:
    """Unlink a socket left by a dead daemon; refuse if a live one answers."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
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


def unlink_if_ours(bound: BoundSocket) -> None:
    """Remove our socket file at exit, unless it was adopted or already replaced."""
    if not bound.owned or bound.path is None:
        return
    try:
        if os.stat(bound.path).st_ino == bound.inode:
            bound.path.unlink()
    except OSError:
        pass

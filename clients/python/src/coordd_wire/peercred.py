"""Who is on the other end of a Unix socket: SO_PEERCRED (Linux), LOCAL_PEERCRED (macOS)."""

from __future__ import annotations

import errno
import os
import socket
import struct
import sys
from pathlib import Path

from coordd_wire.errors import DaemonUnavailable, UntrustedSocket

# <sys/un.h> on macOS: SOL_LOCAL = 0, LOCAL_PEERCRED = 1, returning struct xucred
# {u_int cr_version; uid_t cr_uid; short cr_ngroups; gid_t cr_groups[16]}.
_SOL_LOCAL = 0
_LOCAL_PEERCRED = 1
_XUCRED = struct.Struct("IIh")


def peer_uid(sock: socket.socket) -> int | None:
    """The peer's uid, or None where the platform cannot tell."""
    if hasattr(socket, "SO_PEERCRED"):
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", creds)
        return int(uid)
    if sys.platform == "darwin":
        raw = sock.getsockopt(_SOL_LOCAL, _LOCAL_PEERCRED, 76)
        _version, uid, _ngroups = _XUCRED.unpack_from(raw)
        return int(uid)
    return None


def require_same_user(sock: socket.socket, socket_path: object) -> None:
    """Refuse a socket served by another uid: it is not our daemon.

    A daemon of ours only ever runs as our uid; anything else listening on
    our socket path was planted there (a shared `/tmp`, a swapped file) and
    would read what we post and feed us tasks of its choosing.
    """
    uid = peer_uid(sock)
    if uid is not None and uid != os.geteuid():
        raise UntrustedSocket(
            f"the socket {socket_path} is served by uid {uid}, not by this user"
            f" (uid {os.geteuid()}); refusing to talk to it. Remove it, or point"
            " --socket / $COORDD_SOCKET at a private directory",
            socket=str(socket_path),
            peer_uid=uid,
        )


def connect_same_user(socket_path: Path) -> socket.socket:
    """A connected socket to `socket_path`, served by this user (`require_same_user`).

    The one way every client opens the daemon's socket: the client's connection and
    discovery's probes both, so a probe can never trust a socket a call would refuse.
    """
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(socket_path))
    except OSError as exc:
        sock.close()
        raise DaemonUnavailable(
            f"no coordd answers on {socket_path}: {exc.strerror or exc}",
            socket=str(socket_path),
            errno=errno.errorcode.get(exc.errno or 0, ""),
        ) from None
    try:
        require_same_user(sock, socket_path)
    except BaseException:
        sock.close()
        raise
    return sock

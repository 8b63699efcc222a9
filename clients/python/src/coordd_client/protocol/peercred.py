"""Who is on the other end of a Unix socket: SO_PEERCRED (Linux), LOCAL_PEERCRED (macOS)."""

from __future__ import annotations

import os
import socket
import struct
import sys

from coordd_client.protocol.errors import UntrustedSocket

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

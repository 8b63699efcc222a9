"""Who is on the other end of a Unix socket: SO_PEERCRED (Linux), LOCAL_PEERCRED (macOS)."""

from __future__ import annotations

import socket
import struct
import sys

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

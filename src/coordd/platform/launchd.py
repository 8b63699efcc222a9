"""launchd: adopt the socket a LaunchAgent's `Sockets` entry created (launch_activate_socket(3))."""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import socket
import sys

log = logging.getLogger(__name__)

#: The key under `Sockets` in launchd/coordd.plist; must match the plist.
LAUNCHD_SOCKET_NAME = "Listeners"


def adopt_launchd_socket(name: str = LAUNCHD_SOCKET_NAME) -> socket.socket | None:
    """The listening socket launchd holds for us, or None when not launched by launchd."""
    if sys.platform != "darwin":
        return None
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.dylib", use_errno=True)
    fds = ctypes.POINTER(ctypes.c_int)()
    count = ctypes.c_size_t(0)
    launch_activate_socket = libc.launch_activate_socket
    launch_activate_socket.argtypes = [
        ctypes.c_char_p,
        ctypes.POINTER(ctypes.POINTER(ctypes.c_int)),
        ctypes.POINTER(ctypes.c_size_t),
    ]
    launch_activate_socket.restype = ctypes.c_int
    error = launch_activate_socket(name.encode(), ctypes.byref(fds), ctypes.byref(count))
    if error != 0 or count.value == 0:
        return None  # ESRCH: not managed by launchd; ENOENT: no such socket name
    try:
        first = int(fds[0])
        log.info("adopted socket fd %d from launchd", first)
        return socket.socket(fileno=first)
    finally:
        libc.free(fds)

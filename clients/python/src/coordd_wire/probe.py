"""Which sockets a daemon of this user answers on: one ping on each, all at once.

A record in the rendezvous names a socket; only a daemon that answers a ping
there counts. A socket that accepts and never answers (a daemon stopped with
^Z, or stuck) costs a probe its whole bound, and every call and every hook
may probe every record: so the probes run side by side, on non-blocking
sockets under one selector and one deadline, and N such sockets cost one
bound, not N. Each probe opens one connection, and sends nothing until the
socket file is owned by this uid and its peer is this uid (`peercred`), as a
call would require.
"""

from __future__ import annotations

import errno
import os
import selectors
import socket
import stat
import time
from collections.abc import Iterable
from pathlib import Path

import msgspec

from coordd_wire.errors import CoordError
from coordd_wire.framing import FrameDecoder, FrameError, encode_frame
from coordd_wire.peercred import require_same_user

#: Seconds the probes of one look have, in all, to be answered.
PROBE_TIMEOUT_S = 1.0
PING = encode_frame(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
#: The most a ping's answer takes (a daemon that sends more is not answering a ping).
MAX_ANSWER_BYTES = 65536


class _Answer(msgspec.Struct):
    error: object = None


def owned_socket(path: Path) -> bool:
    """`path` is a socket file (not through a symlink) owned by this uid."""
    try:
        info = os.lstat(path)
    except (OSError, ValueError):
        return False
    return stat.S_ISSOCK(info.st_mode) and info.st_uid == os.geteuid()


class _Probe:
    """One socket's ping: sending it, then reading the first frame back."""

    def __init__(self, path: Path, sock: socket.socket) -> None:
        self.path = path
        self.sock = sock
        self.unsent = PING
        self.decoder = FrameDecoder(MAX_ANSWER_BYTES)

    def step(self) -> bool | None:
        """Send or read what the socket lets through now: whether the daemon answered,
        or None while that is not known yet."""
        if self.unsent:
            self.unsent = self.unsent[self.sock.send(self.unsent) :]
            return None
        data = self.sock.recv(MAX_ANSWER_BYTES)
        if not data:
            return False
        self.decoder.feed(data)
        payload = self.decoder.next_frame()
        if payload is None:
            return None
        return msgspec.json.decode(payload, type=_Answer).error is None


def _connect(path: Path) -> socket.socket | None:
    """A non-blocking connection to `path` served by this user, or None (nothing
    listens, its backlog is full, or another uid serves it)."""
    if not owned_socket(path):
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        if sock.connect_ex(str(path)) not in (0, errno.EISCONN):
            sock.close()
            return None
        require_same_user(sock, path)
    except (CoordError, OSError, ValueError):
        sock.close()
        return None
    return sock


def answering(paths: Iterable[Path], timeout_s: float) -> set[Path]:
    """The paths among `paths` on which a daemon of this user answers a ping, each
    probed once and all at the same time, within `timeout_s` in all."""
    deadline = time.monotonic() + timeout_s
    answered: set[Path] = set()
    with selectors.DefaultSelector() as selector:
        for path in dict.fromkeys(paths):
            sock = _connect(path)
            if sock is not None:
                selector.register(sock, selectors.EVENT_WRITE, _Probe(path, sock))
        try:
            while selector.get_map() and (left := deadline - time.monotonic()) > 0:
                for key, _events in selector.select(left):
                    probe: _Probe = key.data
                    try:
                        outcome = probe.step()
                    except (BlockingIOError, InterruptedError):
                        continue
                    except (OSError, FrameError, msgspec.DecodeError):
                        outcome = False
                    if outcome is None:
                        if not probe.unsent:
                            selector.modify(probe.sock, selectors.EVENT_READ, probe)
                        continue
                    if outcome:
                        answered.add(probe.path)
                    selector.unregister(probe.sock)
                    probe.sock.close()
        finally:
            for key in list(selector.get_map().values()):
                selector.unregister(key.fileobj)
                key.data.sock.close()
    return answered

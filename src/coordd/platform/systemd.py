"""systemd: socket activation (sd_listen_fds) and sd_notify, with the stdlib only.

Protocols: sd_listen_fds(3) and sd_notify(3). File descriptors passed by
systemd start at 3; `LISTEN_PID` must name this process, or the variables
were meant for someone else (and are left alone for a child to inherit).
"""

from __future__ import annotations

import logging
import os
import socket
import stat
from collections.abc import Mapping

log = logging.getLogger(__name__)

SD_LISTEN_FDS_START = 3


def adopt_listen_fd(environ: Mapping[str, str] | None = None) -> socket.socket | None:
    """The first listening AF_UNIX stream socket passed by systemd, if any."""
    env = os.environ if environ is None else environ
    pid_text, count_text = env.get("LISTEN_PID"), env.get("LISTEN_FDS")
    if not pid_text or not count_text:
        return None
    try:
        pid, count = int(pid_text), int(count_text)
    except ValueError:
        log.warning("ignoring malformed LISTEN_PID/LISTEN_FDS")
        return None
    if pid != os.getpid():
        log.info(
            "LISTEN_PID %d is not this process (%d); binding a socket of our own", pid, os.getpid()
        )
        return None
    names = (env.get("LISTEN_FDNAMES") or "").split(":")
    for index, fd in enumerate(range(SD_LISTEN_FDS_START, SD_LISTEN_FDS_START + count)):
        try:
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
            sock = socket.socket(fileno=fd)
        except OSError:
            continue
        if (
            sock.family == socket.AF_UNIX
            and sock.type == socket.SOCK_STREAM
            and sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
        ):
            name = names[index] if index < len(names) else ""
            log.info("adopted socket fd %d (%s) from systemd", fd, name or "unnamed")
            return sock
        sock.detach()
    return None


class Notifier:
    """sd_notify(3) over the datagram socket named by `$NOTIFY_SOCKET` (also abstract `@`)."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        address = env.get("NOTIFY_SOCKET") or ""
        self._address: str | bytes | None = None
        if address.startswith("@"):
            self._address = b"\0" + address[1:].encode()
        elif address.startswith("/"):
            self._address = address
        self._sock: socket.socket | None = None
        if self._address is not None:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        watchdog_usec = env.get("WATCHDOG_USEC")
        watchdog_pid = env.get("WATCHDOG_PID")
        self.watchdog_interval_s: float | None = None
        if watchdog_usec and (not watchdog_pid or watchdog_pid == str(os.getpid())):
            try:
                self.watchdog_interval_s = int(watchdog_usec) / 1_000_000
            except ValueError:
                self.watchdog_interval_s = None

    def notify(self, *fields: str) -> None:
        if self._sock is None or self._address is None:
            return
        try:
            self._sock.sendto("\n".join(fields).encode(), self._address)
        except OSError as exc:
            log.warning("sd_notify failed: %s", exc)

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

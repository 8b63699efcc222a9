"""Socket activation, the way systemd does it (sd_listen_fds(3)), for tests.

    python activate.py SOCKET_PATH {self|other} COORDD_ARGS...

Binds and listens on SOCKET_PATH, moves the socket to fd 3, sets LISTEN_FDS=1,
LISTEN_FDNAMES and LISTEN_PID (this pid, which exec keeps, or a wrong one),
then execs `python -m coordd COORDD_ARGS...`.
"""

from __future__ import annotations

import os
import socket
import sys


def main() -> None:
    path, pid_mode, *coordd_args = sys.argv[1:]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.listen(128)
    if sock.fileno() != 3:
        os.dup2(sock.fileno(), 3)
    os.set_inheritable(3, True)
    env = dict(os.environ)
    env["LISTEN_FDS"] = "1"
    env["LISTEN_FDNAMES"] = "coordd.socket"
    env["LISTEN_PID"] = str(os.getpid()) if pid_mode == "self" else "1"
    os.execve(sys.executable, [sys.executable, "-m", "coordd", *coordd_args], env)


if __name__ == "__main__":
    main()

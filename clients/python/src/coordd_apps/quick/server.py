"""The quick server: the whole client loaded once, a child forked for each `coord` call.

Started in the background by a call that found none (`relay.start_server`), in a
session of its own, with its lock file held for its whole life (a second server
for the same place exits at once). It loads every module a quick command needs,
binds `quick-<stamp>.sock` (0600, in the user's private directory), and accepts
only this user's processes (`SO_PEERCRED`). Each connection is a call: the server
forks at once and goes back to accepting; the child reads the call, takes the
caller's stdin, stdout and stderr, working directory, umask and environment, and
answers for the caller's process (`tabs.act_for`), then runs `cli.main` exactly
as the caller would have and reports its exit status.

It has no threads (a fork copies only the forking thread), frees its children
without waiting on them (`SIGCHLD` ignored), and exits after `IDLE_S` without a
call, or within `CHECK_S` of its socket being removed or replaced. Code that changes (an upgrade, an
edit of an editable install) is another stamp, hence another server; the old one
idles out.
"""

from __future__ import annotations

import array
import fcntl
import gc
import json
import os
import signal
import socket
import sys
import time
from typing import Any

from coordd_client import tabs

#: Seconds without a call before the server exits.
IDLE_S = 900.0
#: Seconds between looks at the socket (gone or replaced: the server exits).
CHECK_S = 5.0
#: Seconds a child waits for its call and its `go`.
CALL_TIMEOUT_S = 30.0
#: The longest call (its environment, mostly) a child reads.
MAX_CALL_BYTES = 4 * 1024 * 1024


def main(argv: list[str]) -> int:
    socket_path, lock_path = argv
    lock = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another server holds this place
    _preload()
    listener = _bind(socket_path)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are freed without a wait
    gc.freeze()  # what is loaded stays shared with every child (no copy on a collection)
    bound = os.stat(socket_path)
    listener.settimeout(CHECK_S)
    last_call = time.monotonic()
    while _still_ours(socket_path, bound) and time.monotonic() - last_call < IDLE_S:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            continue
        last_call = time.monotonic()
        if not _same_user(conn):
            conn.close()
            continue
        if os.fork() == 0:
            listener.close()
            os.close(lock)
            _serve(conn)  # never returns
        conn.close()
    if _still_ours(socket_path, bound):
        os.unlink(socket_path)
    return 0


def _preload() -> None:
    """Every module a quick command runs, so a child imports nothing."""
    import coordd_apps.hooks.entry
    import coordd_apps.hooks.run
    import coordd_apps.hooks.transcript  # issue 48: a hook's usage report
    import coordd_apps.hooks.usage
    import coordd_apps.summary  # noqa: F401
    import coordd_client.methods_usage  # noqa: F401
    import coordd_wire.wire_usage  # noqa: F401
    from coordd_apps import cli

    cli.load_groups()
    from coordd_apps.cli.registry import build_parser

    build_parser(cli.WORKFLOW)


def _bind(path: str) -> socket.socket:
    if os.path.exists(path):
        os.unlink(path)  # only a server holding the lock gets here: it was a dead one's
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(path)
    finally:
        os.umask(old)
    listener.listen(128)
    return listener


def _still_ours(path: str, bound: os.stat_result) -> bool:
    try:
        now = os.stat(path)
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (bound.st_dev, bound.st_ino)


def _same_user(conn: socket.socket) -> bool:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    return int.from_bytes(creds[4:8], sys.byteorder) == os.geteuid()


def _serve(conn: socket.socket) -> None:
    """A child: read the call, wait for `go`, run it as the caller, report, exit."""
    code = 1
    try:
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        conn.settimeout(CALL_TIMEOUT_S)
        call, fds = _receive(conn)
        conn.sendall(f"pid {os.getpid()}\n".encode())
        if _line(conn) != b"go":
            os._exit(0)  # the caller gave up and runs it itself
        conn.settimeout(None)
        _become_the_caller(call, fds)
        code = _run(call["argv"])
        conn.sendall(f"exit {code}\n".encode())
    except BaseException as exc:  # a child never returns into the server's loop
        sys.stderr.write(f"coord: the quick server's child failed: {exc!r}\n")
    finally:
        os._exit(code)


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    fds = array.array("i")
    data, ancillary, _, _ = conn.recvmsg(65536, socket.CMSG_SPACE(3 * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    while not data.endswith(b"\n"):
        piece = conn.recv(65536)
        if not piece or len(data) > MAX_CALL_BYTES:
            raise ConnectionError("the call ended before its line did")
        data += piece
    if len(fds) != 3:
        raise ConnectionError(f"the call came with {len(fds)} descriptors, not 3")
    call: dict[str, Any] = json.loads(data)
    return call, list(fds)


def _line(conn: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        piece = conn.recv(64)
        if not piece:
            return b""
        data += piece
    return data.rstrip(b"\n")


def _become_the_caller(call: dict[str, Any], fds: list[int]) -> None:
    """The caller's stdin, stdout and stderr, directory, umask, environment and process."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(call["cwd"])
    os.umask(int(call["umask"]))
    os.environ.clear()
    os.environ.update(call["env"])
    tabs.act_for(int(call["parent"]), int(call["session"]))
    sys.argv = ["coord", *call["argv"]]


def _run(argv: list[str]) -> int:
    """`cli.main(argv)` as the console script runs it: SystemExit's code, and the
    interpreter's own 120 when stdout cannot be flushed at the end."""
    from coordd_apps.cli import main as cli

    try:
        code: object = cli(argv)
    except SystemExit as exc:
        code = exc.code
    except KeyboardInterrupt:
        code = 130
        sys.stderr.write("\n")
    except Exception:  # as the interpreter reports an uncaught one
        import traceback

        traceback.print_exc()
        code = 1
    if code is None:
        code = 0
    elif not isinstance(code, int):
        sys.stderr.write(f"{code}\n")
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, OSError):
            code = 120
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

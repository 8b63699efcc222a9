"""A quick server's worker: forked warm, it serves `coord` calls one after another.

A child forked per call paid for the fork and then for every page of the server it
touched (copy on write: about 1,200 page faults for a pre-edit hook, 4-5 ms here,
twice the hook's own work). A worker pays that once, on its first call; later calls
touch pages it already owns. Between calls it puts back what a call changed in the
process (its descriptors, the caller's identity, the worktree cache) and checks
what it cannot put back (a thread still running, a descriptor left open, a signal
handler changed, unread input, output it could not flush, an interrupt, an uncaught
exception): any of
those and the worker exits after answering, so the next call gets a fresh one.
The server forks a spare whenever none is idle (`server.py`).

A call's steps are the same as a forked child's were: read the call, answer `pid
N`, wait for `go` (a caller that gave up runs its command itself, and this worker
goes back to waiting), take the caller's stdin, stdout and stderr, directory,
umask and environment, answer for the caller's process (`tabs.act_for`), run
`cli.main`, give the caller's descriptors back, and answer `exit N`: the caller's
pipes are closed before it hears its status, so a host reading them to their end
is not kept waiting by a worker that lives on. The worker then waits for the caller
to close the connection, which it does only once it no longer forwards signals to
this pid, so an interrupt meant for one call never reaches the next.
"""

from __future__ import annotations

import array
import json
import os
import signal
import socket
import sys
import threading
import time
from typing import Any, NoReturn

from coordd_client import tabs, worktree
from coordd_wire.peercred import peer_uid

#: Seconds a worker waits for its call and its `go`.
CALL_TIMEOUT_S = 30.0
#: The longest call (its environment, mostly) a worker reads.
MAX_CALL_BYTES = 4 * 1024 * 1024
#: Calls a worker serves before it makes way for a fresh one (bounds any slow growth).
MAX_CALLS = 500
#: Seconds a spare (not the server's first worker) waits without a call before it exits.
SPARE_IDLE_S = 60.0
#: Seconds between a waiting worker's looks at its server (gone: the worker exits too).
CHECK_S = 5.0
#: What a worker tells its server: waiting for a call, or serving one.
IDLE, BUSY = b"i", b"b"
#: The signals a call may meet, and what a worker has for them between calls.
CALL_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGPIPE)


def tell(notify: int, state: bytes, pid: int) -> None:
    """One 5-byte record on the server's pipe (atomic: under PIPE_BUF)."""
    os.write(notify, state + pid.to_bytes(4, "little"))


def work(listener: socket.socket, notify: int, server: int, keeper: bool) -> NoReturn:
    """Serve calls until told not to by a call, by idleness or by the server's end."""
    code = 0
    try:
        _defaults()
        baseline = _Baseline()
        listener.settimeout(CHECK_S)
        pid = os.getpid()
        waiting_since = time.monotonic()
        for _ in range(MAX_CALLS):
            tell(notify, IDLE, pid)
            while True:
                try:
                    conn, _ = listener.accept()
                    break
                except TimeoutError:
                    idle = time.monotonic() - waiting_since
                    if os.getppid() != server or (not keeper and idle > SPARE_IDLE_S):
                        os._exit(0)
            tell(notify, BUSY, pid)
            with conn:
                again = _same_user(conn) and _serve(conn, baseline)
            if not (again and baseline.settled()):
                break
            waiting_since = time.monotonic()
    except KeyboardInterrupt:
        pass  # an interrupt forwarded to it between calls: it simply ends
    except BaseException as exc:  # a worker never returns into the server's loop
        sys.stderr.write(f"coord: a quick worker failed: {exc!r}\n")
        code = 1
    os._exit(code)


class _Interrupts:
    """Whether an interrupt came during the call (the CLI turns one into its exit status
    1, so the status alone cannot say)."""

    seen = False

    @classmethod
    def handler(cls, _signum: int, _frame: object) -> None:
        cls.seen = True
        raise KeyboardInterrupt


def _defaults() -> None:
    """What `coord` run as its own process has: Python's own SIGPIPE (ignored, so a
    closed pipe is a `BrokenPipeError` the CLI answers), the rest the system's, and an
    interrupt that is noted as well as raised."""
    for signum in CALL_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGINT, _Interrupts.handler)
    signal.set_wakeup_fd(-1)


def _same_user(conn: socket.socket) -> bool:
    """The caller is this user (macOS has no `SO_PEERCRED`: `peer_uid` asks its own way;
    where nothing can tell, the private directory guards the socket, as for the relay)."""
    uid = peer_uid(conn)
    return uid is None or uid == os.geteuid()


class _Baseline:
    """What a worker is between calls, to put back and to compare with."""

    def __init__(self) -> None:
        self.fds = [os.dup(fd) for fd in (0, 1, 2)]  # the server's: /dev/null, its log
        self.cwd = os.getcwd()
        self.handlers = [signal.getsignal(signum) for signum in CALL_SIGNALS]
        self.open_fds = _open_fds()

    def restore(self) -> None:
        """The caller's descriptors closed (this worker's own in their place), and the
        caller's identity and cached worktrees forgotten."""
        for target, fd in enumerate(self.fds):
            os.dup2(fd, target)
        tabs.act_for_self()
        worktree.forget()
        os.chdir(self.cwd)

    def settled(self) -> bool:
        """Whether the call left nothing behind that could reach the next one."""
        left_unread = sys.stdin.read()  # stdin is /dev/null again: only what was buffered
        return (
            not left_unread
            and threading.active_count() == 1
            and [signal.getsignal(signum) for signum in CALL_SIGNALS] == self.handlers
            and _open_fds() == self.open_fds
        )


def _open_fds() -> int | None:
    """How many descriptors are open (None where the platform cannot list them)."""
    for directory in ("/proc/self/fd", "/dev/fd"):
        try:
            return len(os.listdir(directory))
        except OSError:
            continue
    return None


def _serve(conn: socket.socket, baseline: _Baseline) -> bool:
    """One call; whether this worker may serve another."""
    conn.settimeout(CALL_TIMEOUT_S)
    try:
        call, fds = _receive(conn)
    except (OSError, ValueError):
        return True  # nothing ran, nothing changed
    try:
        conn.sendall(f"pid {os.getpid()}\n".encode())
        go = _line(conn) == b"go"
    except OSError:
        go = False
    if not go:  # the caller gave up and runs it itself
        for fd in fds:
            os.close(fd)
        return True
    conn.settimeout(None)
    _become_the_caller(call, fds)
    code, clean = _run(call["argv"])
    baseline.restore()
    conn.sendall(f"exit {code}\n".encode())
    # The caller forwards an interrupt to this pid until it has its status: only once it
    # closes its end (having stopped forwarding) may this worker take another call.
    conn.settimeout(CALL_TIMEOUT_S)
    try:
        closed = conn.recv(1) == b""
    except OSError:
        closed = False
    return clean and closed


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    fds = array.array("i")
    data, ancillary, _, _ = conn.recvmsg(65536, socket.CMSG_SPACE(3 * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    try:
        while not data.endswith(b"\n"):
            piece = conn.recv(65536)
            if not piece or len(data) > MAX_CALL_BYTES:
                raise ConnectionError("the call ended before its line did")
            data += piece
        if len(fds) != 3:
            raise ConnectionError(f"the call came with {len(fds)} descriptors, not 3")
        call: dict[str, Any] = json.loads(data)
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
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


def _run(argv: list[str]) -> tuple[int, bool]:
    """`cli.main(argv)` as the console script runs it: SystemExit's code, and the
    interpreter's own 120 when stdout cannot be flushed at the end; and whether the
    call ended in a way a worker may serve another after (no interrupt, no flush error,
    no uncaught exception)."""
    from coordd_apps.cli import main as cli

    clean = True
    _Interrupts.seen = False
    try:
        code: object = cli(argv)
    except SystemExit as exc:
        code = exc.code
    except KeyboardInterrupt:
        code, clean = 130, False
        sys.stderr.write("\n")
    except Exception:  # as the interpreter reports an uncaught one
        import traceback

        traceback.print_exc()
        code, clean = 1, False
    if code is None:
        code = 0
    elif not isinstance(code, int):
        sys.stderr.write(f"{code}\n")
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, OSError):
            code, clean = 120, False
    return code, clean and not _Interrupts.seen

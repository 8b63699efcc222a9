"""The `coord` process a host or a shell starts, on the quick path: hand the call over.

`try_quick` connects to this user's quick server (`server.py`; its socket beside
the daemon's, named for this code, home and interpreter as the shared MCP
server's is: `mcp_relay.place`), checks it is this user's, and sends one request:
a line of JSON (argv, environment, working directory, umask, parent pid, session
id) with this process's stdin, stdout and stderr attached (`SCM_RIGHTS`). The
server's worker answers `pid N` when it is ready, and runs the command only when
this process says `go`: a call that gave up waiting (and runs the command itself)
never runs twice, since its worker then reads the end of the connection instead.
The worker answers `exit N` when done; this process forwards an interrupt or
termination to it meanwhile, stops forwarding, closes the connection (the worker
serves its next caller only after that close), then exits with its status. A server that is not
there (or not this user's, or gone before `go`) returns None: the caller runs the
command itself and starts a server for the next call. After `go`, the worker's
status is the answer, whatever it is.

Standard library only, and its cheap parts (`_socket`, `_json`'s escaper,
`_signal`), since this is all a quick call loads.
"""

from __future__ import annotations

import _json
import _signal  # type: ignore[import-not-found]  # `signal` imports `enum`: a relay's whole budget
import _socket
import os
import sys

from coordd_apps.mcp_relay.place import (
    Place,
    Unusable,
    code_stamp,
    ensure_private,
    peer_uid,
    socket_flag,
)
from coordd_wire.location import socket_location

TYPE_CHECKING = False  # `typing` costs this path as much as the rest of it
if TYPE_CHECKING:
    from collections.abc import Sequence

#: `COORD_QUICK=0` runs every command in the calling process; `COORD_QUICK=require`
#: refuses (exit 1) a quick command no quick server takes (the parity tests use it).
QUICK_ENV = "COORD_QUICK"
#: The commands served quickly: an agent's everyday calls, each short. Long-running
#: and interactive ones (`wait`, `watch`, `hold`, `top`, `web`, `land`, `mcp`) and
#: the ones that spawn hosts or write their files (`setup`, `doctor`) are not.
QUICK_COMMANDS = frozenset(
    {
        "post", "ls", "show", "claim", "next", "renew", "release", "assign", "done",
        "fail", "cancel", "reopen", "heartbeat", "reserve", "unreserve", "check",
        "reservations", "msg", "prime", "whoami", "agents", "hook",
    }
)  # fmt: skip
#: Hook events served quickly: every one a host waits for (`deliver` runs before every
#: prompt, `turn-end` at every Codex turn's end); `wake` waits in the background for minutes.
QUICK_HOOKS = frozenset(
    {"pre-edit", "post-tool", "pre-commit", "session-start", "session-end", "deliver", "turn-end"}
)
#: A caller's choice of its own stdio's encoding: a worker's streams were made at the
#: server's start and keep the server's, so such a call runs in its own process (and
#: starts no server, which would make it every later caller's encoding).
IO_ENCODING_ENV = "PYTHONIOENCODING"
#: The signals a relay passes on to the worker serving its call.
FORWARDED = (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP)
#: What this relay passed on to its worker, in order.
_forwarded: list[int] = []
#: Seconds to wait for the server's worker to say it runs.
START_TIMEOUT_S = 10.0
#: The server's socket name: `quick-<stamp>.sock`.
PREFIX = "quick"


def place_of(arguments: Sequence[str]) -> Place:
    """Where this code's quick server listens for this user and home."""
    home = os.environ.get("HOME") or os.path.expanduser("~")
    daemon_socket = socket_location(socket_flag(arguments), os.environ)
    directory = os.path.dirname(os.path.abspath(daemon_socket))
    return Place(directory, code_stamp(home), PREFIX)


def wanted(arguments: Sequence[str], command: str | None) -> bool:
    """Whether this call goes the quick way."""
    if os.environ.get(QUICK_ENV, "") == "0" or command not in QUICK_COMMANDS:
        return False
    if os.environ.get(IO_ENCODING_ENV):
        return False
    if "--wait" in arguments or any(a.startswith("--wait=") for a in arguments):
        return False
    if command == "hook":
        return any(word in QUICK_HOOKS for word in arguments)
    return True


def required() -> bool:
    return os.environ.get(QUICK_ENV, "") == "require"


def try_quick(arguments: Sequence[str], place: Place) -> int | None:
    """Run the call through the quick server: its exit status, or None to run it here."""
    try:
        ensure_private(place)
    except Unusable:
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(place.socket)
        if peer_uid(sock) not in (None, os.geteuid()):
            sock.close()
            return None
        sock.sendmsg([_request(arguments)], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, _fds())])
        sock.settimeout(START_TIMEOUT_S)
        reader = _Lines(sock)
        first = reader.line()
        if not first.startswith(b"pid "):
            sock.close()
            return None  # the worker never ran: nothing was done, run it here
        child = int(first[4:])
        sock.settimeout(None)
        before = _forward_signals(child)
        try:
            sock.sendall(b"go\n")  # from here on, the worker runs it and nobody else
        except OSError:
            _stop_forwarding(before)  # it runs here: an interrupt is this process's again
            raise
    except OSError:
        sock.close()
        return None
    try:
        last = reader.line()
    except OSError:
        last = b""
    finally:
        _stop_forwarding()  # before the close: the worker then serves other callers
        sock.close()
    if not last.startswith(b"exit "):
        if _forwarded and _forwarded[-1] != _signal.SIGINT:
            # Terminated, as it was told: end as a `coord` in its own process would
            # (by that signal, SIG_DFL since `_stop_forwarding`), not with a complaint.
            os.kill(os.getpid(), _forwarded[-1])
        sys.stderr.write("coord: the quick server's worker ended without a status\n")
        return 1
    return int(last[5:])


def _request(arguments: Sequence[str]) -> bytes:
    quote = _json.encode_basestring_ascii
    env = ",".join(f"{quote(k)}:{quote(v)}" for k, v in os.environ.items())
    umask = os.umask(0)
    os.umask(umask)
    return (
        f'{{"argv":[{",".join(quote(a) for a in arguments)}],"env":{{{env}}},'
        f'"cwd":{quote(os.getcwd())},"umask":{umask},"parent":{os.getppid()},'
        f'"session":{os.getsid(0)}}}\n'
    ).encode()


def _fds() -> bytes:
    """stdin, stdout and stderr as an `SCM_RIGHTS` payload (C ints)."""
    return b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in (0, 1, 2))


def _forward_signals(child: int) -> list[object]:
    """An interrupt or termination of this process reaches the worker doing the work;
    the handlers it had before, to put back."""

    def forward(signum: int, _frame: object) -> None:
        _forwarded.append(signum)
        try:
            os.kill(child, signum)
        except OSError:
            pass

    return [_signal.signal(signum, forward) for signum in FORWARDED]


def _stop_forwarding(handlers: list[object] | None = None) -> None:
    """Signals this process's own again: `handlers` (what `_forward_signals` replaced),
    or the system's defaults once the worker's status is in (the relay only exits)."""
    for n, signum in enumerate(FORWARDED):
        _signal.signal(signum, _signal.SIG_DFL if handlers is None else handlers[n])


class _Lines:
    """Lines from the server, read as they come."""

    def __init__(self, sock: _socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def line(self) -> bytes:
        while b"\n" not in self.buffer:
            piece = self.sock.recv(4096)
            if not piece:
                return b""
            self.buffer += piece
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line


def start_server(place: Place) -> None:
    """Start a quick server for the next call, in the background, unless one is starting:
    its lock is held for its whole life, so a held lock means one is there or coming."""
    import fcntl

    try:
        ensure_private(place)
        lock = os.open(place.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except (Unusable, OSError):
        return
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock)
        return
    os.close(lock)  # the server takes it again, for good
    try:
        log = os.open(place.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    except OSError:
        return
    try:
        # -P: not the caller's directory first on sys.path, where a project's `random.py`
        # (or its own `coordd_apps`) would be imported and run by the server instead.
        command = [sys.executable, "-P", "-m", "coordd_apps.quick.server"]
        command += [place.socket, place.lock]
        actions: list[tuple[int, ...] | tuple[int, int, str, int, int]] = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, log, 1),
            (os.POSIX_SPAWN_DUP2, log, 2),
        ]
        actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited()]
        os.posix_spawn(sys.executable, command, os.environ, file_actions=actions, setsid=True)
    except OSError:
        pass
    finally:
        os.close(log)


def _inherited() -> list[int]:
    """Descriptors above stderr a server would inherit: a pipe the host waits to see
    closed must not live on in a server that outlives this call."""
    import fcntl

    directory = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"
    found = []
    for name in os.listdir(directory):
        fd = int(name)
        if fd <= 2:
            continue
        try:
            if not fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC:
                found.append(fd)
        except OSError:
            continue
    return found

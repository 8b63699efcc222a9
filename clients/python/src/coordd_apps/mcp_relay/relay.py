"""The process a tab starts as `coord mcp`: stdio in and out, the shared server behind.

What it does, in order:

1. finds the shared server's socket (`place.py`) and connects, checking the
   server is this user's (its uid, `SO_PEERCRED`, as the daemon's clients do);
2. if nobody answers, takes the lock file beside it and starts one (the
   lock makes two tabs starting at once end with one server: the second
   finds the first's on its own try under the lock), and waits until it is
   ready, at most `START_TIMEOUT_S`;
3. sends one hello line: this process's argv, environment, working
   directory and pid, so the server works out this tab's agent name,
   project and daemon from *this* process, as `coord mcp` always did
   (`identity.identify`, the tab registry by this process's ancestry);
4. copies stdin's lines to the socket and the socket's bytes to stdout until
   stdin ends (the host closed the tab), then lets the server end the
   session and exits 0.

Lines from the host are read with the 4 MiB bound of `lines.py`: a longer one
is answered with a JSON-RPC error and dropped as it arrives; a line that is
not JSON is answered -32700 by the server's reader.

When the shared server cannot be used (the directory is not private, it did
not start, it refused the hello), the tab is served in-process, as before
the relay existed, saying why on stderr; `$COORD_MCP_INPROCESS=1` asks for
that, and `$COORD_MCP_INPROCESS=unless-running` for a shared server already
running, else in-process, never starting one (`coord doctor`'s probes: what
a tab runs, with nothing left behind; a relay that predates the value reads it
as 1). When the shared server goes away mid-session the relay does not try to
rebuild the session the host negotiated: it says so on stderr and exits 1,
so the host shows the server as failed (and restarts it on request) instead
of waiting on answers that will never come.

Only the standard library, and only its cheap parts: `_socket` rather than
`socket` (whose enums cost more than the rest of the relay), `_json`'s
string escaper rather than `json` (which imports `re`), `os.posix_spawn`
rather than `subprocess`. `tests/system/test_mcp_relay.py` counts the
modules.
"""

from __future__ import annotations

import _json
import _socket
import fcntl
import os
import select
import sys

from coordd_apps.mcp_relay.lines import OVERLONG_ANSWER, LineSplitter
from coordd_apps.mcp_relay.place import (
    Place,
    Unusable,
    ensure_private,
    peer_uid,
    place_for,
    socket_flag,
)
from coordd_wire.location import socket_location

TYPE_CHECKING = False  # `typing` costs the relay a bare interpreter's start again
if TYPE_CHECKING:
    from collections.abc import Sequence

#: Set to 1 to serve the tab in this process (the SDK loaded here), as before the relay.
INPROCESS_ENV = "COORD_MCP_INPROCESS"
#: `INPROCESS_ENV`'s value for: a shared server already running, else this process.
UNLESS_RUNNING = "unless-running"
#: Seconds a starting server has to be ready (it imports the SDK: about 1 s, 5 s loaded).
START_TIMEOUT_S = 30.0
#: Seconds the server has to answer the hello (it parses the arguments, nothing more).
HELLO_TIMEOUT_S = 30.0
#: Bytes queued towards either side before the relay stops reading the other.
HIGH_WATER = 1024 * 1024
#: Bytes read at a time.
CHUNK = 65536
#: What the relay's lines on stderr start with.
PREFIX = "coord mcp: "


def main(argv: Sequence[str]) -> int:
    """`coord mcp ...`: relay this tab to the shared server, or serve it here."""
    arguments = list(argv)
    inprocess = os.environ.get(INPROCESS_ENV, "")
    if inprocess not in ("", "0", UNLESS_RUNNING) or _wants_the_cli(arguments):
        return _in_process(arguments)
    may_start = inprocess != UNLESS_RUNNING
    home = os.environ.get("HOME") or os.path.expanduser("~")
    place = place_for(socket_location(socket_flag(arguments), os.environ), home)
    if not may_start and not os.path.isdir(place.directory):
        return _in_process(arguments)  # no server can be running there; nothing is made
    try:
        ensure_private(place)
        sock = _connect(place.socket) or (_start(place) if may_start else None)
        first = _hello(sock, arguments) if sock is not None else None
    except (Unusable, OSError) as exc:
        sys.stderr.write(f"{PREFIX}the shared MCP server cannot be used ({exc}); serving")
        sys.stderr.write(" this tab in-process\n")
        return _in_process(arguments)
    if sock is None or first is None:  # none running (and none to start), or refused: the
        if sock is not None:  # CLI words usage errors exactly as it always has
            sock.close()
        return _in_process(arguments)
    return _pump(sock, first, place)


def _wants_the_cli(arguments: list[str]) -> bool:
    """`--help` and `--version` are the CLI's to answer."""
    return any(word in ("-h", "--help", "--version") for word in arguments)


def _in_process(arguments: list[str]) -> int:
    from coordd_apps.cli import main as cli

    return cli(arguments)


def _connect(path: str) -> _socket.socket | None:
    """A connection to the server on `path`; None when nobody listens there."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    except OSError:
        sock.close()
        raise
    _require_same_user(sock, path)
    return sock


def _require_same_user(sock: _socket.socket, path: str) -> None:
    """Refuse a server of another uid (it could read every tab's calls)."""
    uid = peer_uid(sock)
    if uid is not None and uid != os.geteuid():
        sock.close()
        raise Unusable(f"the socket {path} is served by uid {uid}, not by this user")


def _start(place: Place) -> _socket.socket:
    """Start the shared server, unless another tab did while this one waited for the
    lock; the connection to it."""
    lock = os.open(place.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # held at most START_TIMEOUT_S by the starter
        found = _connect(place.socket)
        if found is not None:
            return found
        _spawn_and_wait(place)
        started = _connect(place.socket)
        if started is None:
            raise Unusable(f"the shared MCP server started but {place.socket} refuses")
        return started
    finally:
        os.close(lock)  # releases the lock


def _spawn_and_wait(place: Place) -> None:
    """Run `python -m coordd_apps.mcp_bridge.shared` in a session of its own (so the
    host's kill of this tab's process group leaves it be), never as this process's
    child, and wait for its word."""
    ready_r, ready_w = os.pipe()
    log = os.open(place.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    try:
        os.set_inheritable(ready_w, True)
        # -P: a project's module in the tab's directory must not shadow the server's.
        command = [sys.executable, "-P", "-m", "coordd_apps.mcp_bridge.shared"]
        command += ["--socket", place.socket, "--ready-fd", str(ready_w)]
        actions: list[tuple[int, ...] | tuple[int, int, str, int, int]] = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, log, 1),
            (os.POSIX_SPAWN_DUP2, log, 2),
        ]
        actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited(keep=ready_w)]
        _spawn_orphan(command, actions)
    finally:
        os.close(ready_w)
        os.close(log)
    try:
        readable, _, _ = select.select([ready_r], [], [], START_TIMEOUT_S)
        word = os.read(ready_r, 64) if readable else b""
    finally:
        os.close(ready_r)
    if not word.startswith(b"ready"):
        why = "did not start in time" if not readable else "exited while starting"
        raise Unusable(f"the shared MCP server {why}; its log is {place.log}")


def _spawn_orphan(
    command: list[str], actions: list[tuple[int, ...] | tuple[int, int, str, int, int]]
) -> None:
    """Start `command` in a session of its own from a forked child that exits at once, so
    the server's parent is init, which reaps it when it ends.

    A server this process started itself would stay its zombie once it ended, for as long
    as the tab lives: a tab served in-process (the server did not start in time, or
    failed to) lives for hours. The relay has started no thread yet, so the fork is safe
    and cheap; the child runs nothing but the spawn.
    """
    middle = os.fork()
    if middle == 0:
        code = 0
        try:
            os.posix_spawn(sys.executable, command, os.environ, file_actions=actions, setsid=True)
        except OSError as exc:
            code = (exc.errno or 1) & 0xFF
        except BaseException:
            code = 1
        os._exit(code)  # the spawn's errno, if it failed
    _, status = os.waitpid(middle, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise Unusable(f"the shared MCP server could not be started: {os.strerror(code)}")


def _inherited(keep: int) -> list[int]:
    """Descriptors above stderr the server would inherit: whatever the host left open
    for this tab (a pipe it waits to see closed) must not live on in a server that
    outlives the tab."""
    directory = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"
    found = []
    for name in os.listdir(directory):
        fd = int(name)
        if fd <= 2 or fd == keep:
            continue
        try:
            if not fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC:
                found.append(fd)
        except OSError:
            continue  # the listing's own descriptor, closed by now
    return found


def _hello(sock: _socket.socket, arguments: list[str]) -> bytes | None:
    """Say who this tab is; the bytes the server sent after its `ok` line, or None if it
    refused (the CLI then runs in-process and words the refusal itself)."""
    quote = _json.encode_basestring_ascii
    env = ",".join(f"{quote(k)}:{quote(v)}" for k, v in os.environ.items())
    hello = (
        f'{{"argv":[{",".join(quote(a) for a in arguments)}],"env":{{{env}}},'
        f'"cwd":{quote(os.getcwd())},"pid":{os.getpid()}}}\n'
    )
    sock.sendall(hello.encode())
    sock.settimeout(HELLO_TIMEOUT_S)
    received = b""
    while b"\n" not in received and len(received) < CHUNK:
        piece = sock.recv(CHUNK)
        if not piece:
            return None
        received += piece
    line, _, rest = received.partition(b"\n")
    if line != b"ok":
        return None
    sock.setblocking(False)
    return rest


class _Ends:
    """The relay's three descriptors and what is queued for each."""

    def __init__(self, sock: _socket.socket, first: bytes) -> None:
        self.sock = sock
        self.to_sock = bytearray()
        self.to_out = bytearray(first)
        self.stdin_open = True
        self.sock_open = True
        self.sent_eof = False
        self.splitter = LineSplitter()

    def take_input(self, lines: list[bytes | None]) -> None:
        for line in lines:
            if line is None:
                self.to_out += OVERLONG_ANSWER
            else:
                self.to_sock += line + b"\n"


def _pump(sock: _socket.socket, first: bytes, place: Place) -> int:
    """Copy until the host's stdin ends and the server has said all it had to."""
    ends = _Ends(sock, first)
    saved = {fd: _set_nonblocking(fd) for fd in (0, 1)}
    try:
        ended = _loop(ends)
    finally:
        for fd, flags in saved.items():
            if flags is not None:
                fcntl.fcntl(fd, fcntl.F_SETFL, flags)
        sock.close()
    if ended == "server":
        sys.stderr.write(
            f"{PREFIX}the shared MCP server ({place.socket}) ended this tab's session;"
            f" its log is {place.log}. Restart this MCP server in the host (Claude Code:"
            " /mcp) and a new one starts.\n"
        )
        return 1
    return 0


def _set_nonblocking(fd: int) -> int | None:
    """The descriptor's flags before (None if it has none to set: closed)."""
    try:
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    except OSError:
        return None
    return flags


def _loop(ends: _Ends) -> str:
    """'host' when the host ended the tab (stdin closed, or stdout gone), 'server' when
    the server went away first."""
    poller = select.poll()
    sock_fd = ends.sock.fileno()
    while True:
        if not ends.stdin_open and not ends.to_sock and not ends.sent_eof:
            ends.sock.shutdown(_socket.SHUT_WR)  # the server ends the session
            ends.sent_eof = True
        if not ends.sock_open and not ends.to_out:
            return "host" if ends.sent_eof else "server"
        wanted = {
            0: select.POLLIN if ends.stdin_open and len(ends.to_sock) < HIGH_WATER else 0,
            1: select.POLLOUT if ends.to_out else 0,
            sock_fd: (select.POLLIN if ends.sock_open and len(ends.to_out) < HIGH_WATER else 0)
            | (select.POLLOUT if ends.to_sock and ends.sock_open else 0),
        }
        for fd, mask in wanted.items():
            if mask:
                poller.register(fd, mask)
            else:
                try:
                    poller.unregister(fd)
                except KeyError:
                    pass
        for fd, _events in poller.poll():
            if fd == 0:
                _read_stdin(ends)
            elif fd == 1:
                if not _write_stdout(ends):
                    return "host"
            else:
                _serve_socket(ends, wanted[sock_fd])


def _read_stdin(ends: _Ends) -> None:
    try:
        data = os.read(0, CHUNK)
    except BlockingIOError:
        return
    except OSError:
        data = b""
    if data:
        ends.take_input(ends.splitter.feed(data))
        return
    ends.take_input(ends.splitter.end())
    ends.stdin_open = False


def _write_stdout(ends: _Ends) -> bool:
    """False when the host no longer reads (it is gone)."""
    try:
        written = os.write(1, ends.to_out)
    except BlockingIOError:
        return True
    except OSError:
        return False
    del ends.to_out[:written]
    return True


def _serve_socket(ends: _Ends, mask: int) -> None:
    if mask & select.POLLOUT and ends.to_sock:
        try:
            sent = ends.sock.send(ends.to_sock)
            del ends.to_sock[:sent]
        except BlockingIOError:
            pass
        except OSError:
            ends.sock_open = False
            ends.to_sock.clear()
            return
    if mask & select.POLLIN:
        try:
            data = ends.sock.recv(CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            ends.to_out += data
        else:
            ends.sock_open = False
            ends.to_sock.clear()

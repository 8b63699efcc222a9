"""What the rendezvous folder may hold besides live daemons' records, and what the daemons a
client starts leave behind: no call, hook or `coordd serve` waits on a file that is not a
record, records whose sockets never answer are probed together, and a daemon that ended
(a zombie included) never looks alive.

Real `coord` and `coordd` processes, with `HOME`, `XDG_STATE_HOME`, `XDG_RUNTIME_DIR` and
`TMPDIR` inside the test's directory, so the rendezvous and the default board are its own.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from coordd_wire.framing import FrameDecoder, encode_frame
from coordd_wire.rendezvous import LiveDaemon, live_daemons, process_started, rendezvous_dir
from support import CALLER_VARS, COORD, daemon_pids, quick_server_ready, serve_by_default

#: Seconds a daemon has to start and announce itself, or a call to end: only to catch a
#: hang (two Python start-ups on a loaded machine take a few).
HANG_S = 90.0
#: Seconds a killed daemon may stay a zombie: its parent (init) reaps it at once; a quick
#: server's spare worker that kept one would end (and let it go) only after a minute.
ZOMBIE_S = 30.0


class User:
    """One user's home and environment in the test's directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        env = {k: v for k, v in os.environ.items() if not k.startswith(CALLER_VARS)}
        for name in ("COORDD_SOCKET", "COORDD_DB", "COORDD_STORE", "COORD_QUICK"):
            env.pop(name, None)
        for name in ("home", "state", "run", "tmp"):
            (root / name).mkdir(mode=0o700)
        env.update(
            HOME=str(root / "home"),
            XDG_STATE_HOME=str(root / "state"),
            XDG_RUNTIME_DIR=str(root / "run"),
            TMPDIR=str(root / "tmp"),
        )
        self.env = env
        self.socket = root / "run" / "coordd" / "coordd.sock"
        self.rendezvous = rendezvous_dir(env)
        self.rendezvous.mkdir(mode=0o700, parents=True)
        #: Processes this test started itself (stopped and waited for at the end).
        self.started: list[subprocess.Popen[bytes]] = []

    def coord(self, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [COORD, *args],
            capture_output=True,
            text=True,
            timeout=HANG_S,
            env={**self.env, **extra},
            check=False,
        )

    def serve(self) -> subprocess.Popen[bytes]:
        """`coordd serve` as `make run` runs it; waits until it answers or exits."""
        process = serve_by_default(self.env, self.root / "daemon.log")
        self.started.append(process)
        deadline = time.monotonic() + HANG_S
        while process.poll() is None and not any(
            r.pid == process.pid for r in live_daemons(self.env)
        ):
            assert time.monotonic() < deadline, "the daemon never announced itself"
            time.sleep(0.05)
        return process


@pytest.fixture
def user(workdir: Path) -> Iterator[User]:
    made = User(workdir)
    yield made
    for pid in daemon_pids(made.root / "home"):
        os.kill(pid, signal.SIGTERM)
    for process in made.started:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        process.wait(60)
    for pid in daemon_pids(made.root / "home"):  # a client's: not ours to wait for
        deadline = time.monotonic() + 60
        while state(pid) not in (None, "Z") and time.monotonic() < deadline:
            time.sleep(0.05)


def error_of(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert result.returncode == 1, result
    error: dict[str, Any] = json.loads(result.stdout)["error"]
    return error


def state(pid: int) -> str | None:
    """The process's state as `ps` shows it (`Z`: a zombie), or None once it is gone."""
    shown = subprocess.run(
        ["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True, check=False
    )
    return shown.stdout.strip()[:1] or None


def record(user: User, name: str, socket_path: Path, board_id: str) -> None:
    """A record naming `socket_path`, for this test's own (live) process."""
    me = os.getpid()
    found = LiveDaemon(
        pid=me, started=process_started(me), socket=str(socket_path), board_id=board_id, store=name
    )
    (user.rendezvous / f"{name}.json").write_bytes(msgspec.json.encode(found))


def test_a_fifo_in_the_rendezvous_hangs_no_call_and_no_daemon(user: User) -> None:
    """Before: `open()` on the FIFO waited for a writer forever, in every call and hook
    and in `coordd serve` itself."""
    os.mkfifo(user.rendezvous / "fifo.json")
    (user.rendezvous / "link.json").symlink_to(user.rendezvous / "fifo.json")
    os.mkfifo(user.rendezvous.parent / "board")  # the user's board record, too
    assert error_of(user.coord("ls", "--json", COORD_NO_AUTOSTART="1"))["data"]["kind"] == (
        "daemon_unavailable"
    )
    daemon = user.serve()
    assert daemon.poll() is None, (user.root / "daemon.log").read_text()
    hook = user.coord("ls", "--json", COORD_NO_AUTOSTART="1")
    assert hook.returncode == 0, hook


class Mute:
    """Sockets that accept and never answer, unless all of them hold a ping at once: then
    each answers its ping. A client that probes one after another (giving each up before
    the next) never gets an answer; one that probes them together gets all."""

    def __init__(self, paths: list[Path]) -> None:
        self.listeners = []
        for path in paths:
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(str(path))
            listener.listen(16)
            self.listeners.append(listener)
        #: Connections each socket took, in all.
        self.taken = [0] * len(paths)
        self.stop_r, self.stop_w = socket.socketpair()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        waiting: dict[socket.socket, tuple[int, FrameDecoder]] = {}
        pinged: dict[int, tuple[socket.socket, int]] = {}
        while True:
            watched: list[socket.socket] = [self.stop_r, *self.listeners, *waiting]
            ready, _, _ = select.select(watched, [], [])
            if self.stop_r in ready:
                break
            for sock in ready:
                if sock in self.listeners:
                    conn, _ = sock.accept()
                    index = self.listeners.index(sock)
                    self.taken[index] += 1
                    waiting[conn] = (index, FrameDecoder())
                    continue
                index, decoder = waiting[sock]
                data = sock.recv(65536)
                if not data:  # the client gave up on it
                    del waiting[sock]
                    pinged.pop(index, None)
                    sock.close()
                    continue
                decoder.feed(data)
                payload = decoder.next_frame()
                if payload is not None:
                    pinged[index] = (sock, json.loads(payload)["id"])
            if len(pinged) == len(self.listeners):
                for sock, request_id in pinged.values():
                    answer = {"jsonrpc": "2.0", "id": request_id, "result": {}}
                    sock.sendall(encode_frame(json.dumps(answer).encode()))
                pinged.clear()
        for sock in waiting:
            sock.close()

    def close(self) -> None:
        self.stop_w.send(b"x")
        self.thread.join(60)
        for listener in self.listeners:
            listener.close()
        self.stop_r.close()
        self.stop_w.close()


@pytest.fixture
def mute(user: User) -> Iterator[Mute]:
    paths = [user.root / f"mute{n}.sock" for n in range(5)]
    for n, path in enumerate(paths):
        record(user, f"mute{n}", path, f"{n:016x}")
    sockets = Mute(paths)
    yield sockets
    sockets.close()


def test_records_whose_sockets_never_answer_are_probed_together_once(
    user: User, mute: Mute
) -> None:
    """Before: each such record cost every call a whole probe bound (1 s), one after
    another. Probed together, the five sockets all hold a ping at the same moment, which
    is when they answer: the client then sees five live boards and names them all."""
    error = error_of(user.coord("ls", "--json", COORD_NO_AUTOSTART="1"))
    assert error["data"]["kind"] == "several_boards", error
    assert sorted(board["board_id"] for board in error["data"]["boards"]) == [
        f"{n:016x}" for n in range(5)
    ]
    assert mute.taken == [1] * 5  # one probe per record, for the whole call


def test_a_zombie_board_does_not_refuse_plain_coordd_serve(user: User) -> None:
    """A daemon of another board that ended but was never reaped (a zombie: its pid still
    answers `kill 0`) refused `make run` as "another of your boards is live"."""
    other = subprocess.Popen(
        [
            str(Path(COORD).with_name("coordd")),
            "serve",
            "--db",
            str(user.root / "other.db"),
            "--socket",
            str(user.root / "other.sock"),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=user.env,
    )
    try:
        deadline = time.monotonic() + HANG_S
        while not any(r.pid == other.pid for r in live_daemons(user.env)):
            assert other.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        os.kill(other.pid, signal.SIGKILL)  # no clean stop: its record stays
        while state(other.pid) != "Z":  # not reaped: this test does not wait for it yet
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert (user.rendezvous / f"{other.pid}.json").exists()
        daemon = user.serve()
        assert daemon.poll() is None, (user.root / "daemon.log").read_text()
    finally:
        other.kill()
        other.wait()


def test_a_daemon_the_quick_server_started_is_reaped_when_it_ends(user: User) -> None:
    """Before: the daemon was the child of the quick server's worker, which never waited
    for it: each one that ended stayed a zombie for as long as the worker lived."""
    user.coord("ls", "--json", COORD_NO_AUTOSTART="1")  # starts the quick server only
    quick_server_ready(user.socket.parent, HANG_S)
    started = user.coord("ls", "--json", COORD_QUICK="require")
    assert started.returncode == 0, started
    (daemon,) = live_daemons(user.env)
    assert state(daemon.pid) not in (None, "Z")
    os.kill(daemon.pid, signal.SIGKILL)
    deadline = time.monotonic() + ZOMBIE_S
    while (now := state(daemon.pid)) is not None:
        assert time.monotonic() < deadline, f"pid {daemon.pid} left in state {now}"
        time.sleep(0.05)
    # Its record outlives it; the next plain `coordd serve` is not refused by it.
    served = user.serve()
    assert served.poll() is None, (user.root / "daemon.log").read_text()

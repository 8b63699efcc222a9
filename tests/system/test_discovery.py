"""One board from any environment: a client whose host dropped `$XDG_RUNTIME_DIR` finds the
user's daemon through its database's lock file, instead of starting a second one.

Every case runs real `coord` processes against a real daemon, with `HOME`,
`XDG_STATE_HOME` and `TMPDIR` inside the test's directory, so the default
database, its record and the fallback socket are the test's own.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coordd_wire.paths import usual_runtime_socket
from coordd_wire.record import read_record
from support import CALLER_VARS, COORD, DaemonProcess, stop_pid

#: A refusal naming the holder (`reason: "database_held"`) comes only from the daemon
#: the client spawned exiting at the database's lock; waiting out the client's ready
#: deadline instead (`autostart.READY_TIMEOUT_S`) ends in "did not answer". So the
#: reason is the proof that the refusal came at once; `Home.coord`'s timeout only
#: catches a hang.


class Home:
    """A user's environment in a directory: home, state dir, runtime dir and TMPDIR."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.runtime = root / "run"
        self.runtime.mkdir(mode=0o700)
        self.tmp = root / "t"
        self.tmp.mkdir()
        self.state = root / "state"
        self.db = self.state / "coordd" / "coord.db"
        self.socket = self.runtime / "coordd" / "coordd.sock"
        #: Where section 1 leads a client without `$XDG_RUNTIME_DIR`.
        self.fallback_socket = self.tmp / f"coordd-{os.getuid()}" / "coordd.sock"

    def env(self, *, runtime: bool, autostart: bool = True, **extra: str) -> dict[str, str]:
        """The user's environment as a host passes it on; `runtime=False`: as Codex does."""
        environ = {k: v for k, v in os.environ.items() if not k.startswith(CALLER_VARS)}
        for name in ("COORDD_SOCKET", "COORDD_DB", "COORDD_STORE", "XDG_RUNTIME_DIR"):
            environ.pop(name, None)
        environ.update(HOME=str(self.root), XDG_STATE_HOME=str(self.state), TMPDIR=str(self.tmp))
        if runtime:
            environ["XDG_RUNTIME_DIR"] = str(self.runtime)
        if not autostart:
            environ["COORD_NO_AUTOSTART"] = "1"
        environ.update(extra)
        return environ

    def coord(self, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [COORD, *args], capture_output=True, text=True, timeout=60, env=env, check=False
        )

    def daemon(self) -> DaemonProcess:
        """The user's daemon: the default database, on the runtime dir's socket."""
        return DaemonProcess(
            self.root, db_path=self.db, socket_path=self.socket, env=self.env(runtime=True)
        )


def doc(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert result.stdout.strip(), result.stderr
    parsed: dict[str, Any] = json.loads(result.stdout)
    return parsed


def daemons_serving(path: Path) -> list[str]:
    found = subprocess.run(
        ["pgrep", "-f", f"serve --socket {path}"], capture_output=True, text=True, check=False
    )
    return found.stdout.split()


@pytest.fixture
def home(workdir: Path) -> Iterator[Home]:
    usual = usual_runtime_socket()
    if usual is not None and usual.exists():
        pytest.skip(f"{usual} exists here: a client without a record would find it")
    yield Home(workdir)


def test_a_host_without_the_runtime_dir_reaches_the_one_board(home: Home) -> None:
    """Before: Codex's coord autostarted a second daemon on $TMPDIR/coordd-<uid>, and the
    task it posted there was invisible to the CLI."""
    daemon = home.daemon().start()
    try:
        record = read_record(home.db.with_name("coord.db.lock"))
        assert record is not None and record.pid == daemon.pid and record.socket == home.socket

        codex = home.env(runtime=False)
        posted = home.coord("post", "posted from codex", "--project", "/p", "--json", env=codex)
        assert posted.returncode == 0, posted.stderr
        listed = home.coord("ls", "--project", "/p", "--json", env=home.env(runtime=True))
        assert [t["title"] for t in doc(listed)["tasks"]] == ["posted from codex"]
        status = doc(home.coord("status", "--json", env=codex))
        assert status["pid"] == daemon.pid and status["socket"] == str(home.socket)

        # The library and the trio client resolve the same way (the MCP server and the
        # hooks go through them).
        script = (
            "import trio\n"
            "from coordd_client import Client\n"
            "from coordd_client.aio import AsyncClient\n"
            "with Client() as c:\n"
            "    print(c.server_info().pid, c.socket_path)\n"
            "async def main():\n"
            "    async with AsyncClient.connect() as c:\n"
            "        print((await c.server_info()).pid, c.socket_path)\n"
            "trio.run(main)\n"
        )
        library = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            env=codex,
            timeout=60,
            check=False,
        )
        assert library.returncode == 0, library.stderr
        assert library.stdout.split() == [str(daemon.pid), str(home.socket)] * 2

        assert not home.fallback_socket.exists()
        assert daemons_serving(home.fallback_socket) == []
        assert not (home.state / "coordd" / "coordd.log").exists()  # autostart's log
    finally:
        assert daemon.stop() == 0


def test_an_explicit_socket_is_never_routed_elsewhere(home: Home) -> None:
    """$COORDD_SOCKET wins (PROTOCOL.md section 1): the fallback is only for a derived path."""
    daemon = home.daemon().start()
    try:
        elsewhere = home.root / "x.sock"
        env = home.env(runtime=False, autostart=False, COORDD_SOCKET=str(elsewhere))
        result = home.coord("ls", "--json", env=env)
        assert result.returncode == 1
        assert doc(result)["error"]["data"]["socket"] == str(elsewhere)
    finally:
        assert daemon.stop() == 0


def test_autostart_on_a_held_database_names_the_holder_at_once(home: Home) -> None:
    """Before: 15 s of waiting, then "start coordd serve", while the daemon's log said the
    database was in use."""
    daemon = home.daemon().start()
    try:
        other = home.root / "other.sock"
        env = home.env(runtime=False, COORDD_SOCKET=str(other))
        result = home.coord("post", "lost", "--json", env=env)
        assert result.returncode == 1
        error = doc(result)["error"]
        assert error["data"]["reason"] == "database_held"
        assert error["data"]["holder_pid"] == daemon.pid
        assert error["data"]["holder_socket"] == str(home.socket)
        assert error["data"]["holder_answers"] is True
        assert str(daemon.pid) in error["message"] and str(home.socket) in error["message"]
        human = home.coord("post", "lost", env=env)
        assert f"pid {daemon.pid}" in human.stderr and f"--socket {home.socket}" in human.stderr
        assert not other.exists()
    finally:
        assert daemon.stop() == 0


def test_a_stuck_holder_is_passed_over_then_named(home: Home) -> None:
    """A recorded socket that accepts but never answers is not used; the autostart that
    follows fails at the lock and says which pid holds it."""
    daemon = home.daemon().start()
    os.kill(daemon.pid, signal.SIGSTOP)
    try:
        result = home.coord("ls", "--json", env=home.env(runtime=False))
        assert result.returncode == 1
        error = doc(result)["error"]
        assert error["data"]["holder_pid"] == daemon.pid
        assert error["data"]["holder_answers"] is False
        assert f"kill {daemon.pid}" in error["message"]
        assert daemons_serving(home.fallback_socket) == []
    finally:
        os.kill(daemon.pid, signal.SIGCONT)
        assert daemon.stop() == 0


def _write_record(home: Home, pid: int, socket_path: Path) -> None:
    home.db.parent.mkdir(parents=True, exist_ok=True)
    home.db.with_name("coord.db.lock").write_text(f"{pid}\n{socket_path}\n")


def _dead_pid() -> int:
    gone = subprocess.Popen(["true"])
    gone.wait()
    return gone.pid


def _no_daemon_found(home: Home) -> None:
    result = home.coord("ls", "--json", env=home.env(runtime=False, autostart=False))
    assert result.returncode == 1
    error = doc(result)["error"]
    assert error["data"]["kind"] == "daemon_unavailable"
    assert error["data"]["socket"] == str(home.fallback_socket)


def test_a_record_of_a_dead_daemon_is_ignored(home: Home, workdir: Path) -> None:
    """Even when its socket is served (by a daemon of another database): the pid is gone."""
    other = DaemonProcess(workdir, socket_path=workdir / "live.sock").start()
    try:
        _write_record(home, _dead_pid(), other.socket_path)
        _no_daemon_found(home)
    finally:
        assert other.stop() == 0


def test_a_record_naming_a_socket_of_another_uid_is_ignored(home: Home, workdir: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("chown to another uid needs root")
    other = DaemonProcess(workdir, socket_path=workdir / "theirs.sock").start()
    try:
        os.chown(other.socket_path, 65534, -1)
        _write_record(home, other.pid, other.socket_path)
        _no_daemon_found(home)
    finally:
        assert other.stop() == 0


def test_a_record_naming_a_socket_that_never_answers_is_ignored(home: Home, workdir: Path) -> None:
    path = workdir / "mute.sock"
    mute = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mute.bind(str(path))
    mute.listen(8)  # accepts into the backlog, never reads
    try:
        _write_record(home, os.getpid(), path)
        _no_daemon_found(home)  # the probe gives up on it: `Home.coord`'s timeout catches a hang
    finally:
        mute.close()


@pytest.fixture
def user_daemon(home: Home) -> Iterator[DaemonProcess]:
    daemon = home.daemon().start()
    yield daemon
    assert daemon.stop() == 0


async def test_the_mcp_link_finds_the_daemon_too(
    home: Home, user_daemon: DaemonProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`coord mcp` under Codex: the server's link goes through the same fallback."""
    pytest.importorskip("mcp")
    import trio

    from coordd_apps.mcp_bridge.link import DaemonLink
    from coordd_client import methods
    from coordd_client.discovery import SocketRoute

    for name, value in home.env(runtime=False, autostart=False).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    route = SocketRoute.resolve()
    assert route.path == home.fallback_socket and not route.explicit
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            link = DaemonLink(nursery, route, autostart=False)
            info = await link.typed(methods.server_info())
            assert info.pid == user_daemon.pid and link.socket_path == home.socket
            await link.aclose()
            nursery.cancel_scope.cancel()


def test_a_codex_session_start_hook_reads_the_one_board(
    home: Home, user_daemon: DaemonProcess
) -> None:
    """Hooks go through the CLI's socket, so they take the fallback too."""
    repo = home.root / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    with user_daemon.client() as client:
        client.post("ready for the codex tab", project=str(repo))
    fixture = Path(__file__).parent.parent / "fixtures" / "hooks" / "codex-session-start.json"
    stdin = fixture.read_text().replace('"CWD"', json.dumps(str(repo)))
    started = subprocess.run(
        [COORD, "hook", "session-start", "--host", "codex"],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
        env=home.env(runtime=False),
        check=False,
    )
    assert started.returncode == 0, started.stderr
    context = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "ready for the codex tab" in context
    assert daemons_serving(home.fallback_socket) == []


# --- a socket keeps its board across a crash (issue 29, item 10) ---------------------


def test_autostart_after_a_crash_restarts_the_board_the_socket_served(home: Home) -> None:
    """Before: the autostarted daemon served the default (empty) board on the same
    socket, and the agents on it silently moved to another board."""
    board = home.root / "project.db"
    env = home.env(runtime=True)
    daemon = DaemonProcess(home.root, db_path=board, socket_path=home.socket, env=env).start()
    try:
        assert doc(home.coord("post", "ours", "--json", env=env))["task"]["title"] == "ours"
        daemon.kill()
    finally:
        daemon.ensure_dead()
    listed = home.coord("ls", "--json", env=env)
    restarted = read_record(board.with_name(board.name + ".lock"))
    try:
        assert listed.returncode == 0, listed.stderr
        assert [t["title"] for t in doc(listed)["tasks"]] == ["ours"]
        assert restarted is not None and restarted.socket == home.socket
        assert not home.db.exists()  # the default board was never created
        recorded = home.socket.with_name(home.socket.name + ".store")
        assert recorded.read_text().strip() == f"sqlite:{board}"
    finally:
        if restarted is not None:
            stop_pid(restarted.pid)
    assert not recorded.exists()  # a clean stop frees the socket of its board


def test_autostart_refuses_to_replace_a_crashed_socket_s_vanished_board(home: Home) -> None:
    board = home.root / "gone.db"
    env = home.env(runtime=True)
    daemon = DaemonProcess(home.root, db_path=board, socket_path=home.socket, env=env).start()
    try:
        home.coord("post", "ours", "--json", env=env)
        daemon.kill()
    finally:
        daemon.ensure_dead()
    for leftover in home.root.glob("gone.db*"):
        leftover.unlink()
    result = home.coord("ls", "--json", env=env)
    assert result.returncode == 1
    error = doc(result)["error"]
    assert error["data"]["reason"] == "store_missing"
    assert str(board) in error["message"] and ".store" in error["message"]
    assert not board.exists() and not home.db.exists()
    assert not daemons_serving(home.socket)


def test_autostart_names_a_crashed_socket_s_team_store_instead_of_starting_it(
    home: Home,
) -> None:
    """What a team daemon records (its DSN without the password) is named, not started."""
    home.socket.parent.mkdir(mode=0o700)
    home.socket.with_name(home.socket.name + ".store").write_text(
        "postgresql://coordd@db.internal/team\n"
    )
    result = home.coord("ls", "--json", env=home.env(runtime=True))
    assert result.returncode == 1
    error = doc(result)["error"]
    assert error["data"]["reason"] == "team_store"
    assert "postgresql://coordd@db.internal/team" in error["message"]
    assert not home.db.exists()

"""Test helpers: a real daemon subprocess, and a raw-frame connection.

Nothing here mocks the daemon, the socket or the database: the daemon is
`python -m coordd serve` on a real Unix socket and a real SQLite file.
"""

from __future__ import annotations

import contextlib
import json
import os
import pty
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from coordd_client import Client
from coordd_wire.errors import CoordError
from coordd_wire.server_info import ServerInfo

READY_TIMEOUT_S = 90.0

#: The mark of a test that starts a daemon on the per-user /tmp/coordd-<uid> socket (the
#: protocol's section 1 path with `$TMPDIR` unset), or runs what looks there (`coord doctor`
#: probes it for an MCP client's default environment; the Inspector starts servers without
#: `$TMPDIR`). That socket is one per machine, not per test, so `make test`'s workers run
#: every such test on one worker, one after another (`--dist loadgroup`).
SHARED_TMP_SOCKET = pytest.mark.xdist_group("shared-tmp-socket")


def short_tmpdir(prefix: str = "cd") -> Path:
    """sun_path is 108 bytes: keep socket paths short (docs/ARCHITECTURE.md)."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))


def rss_kib(pid: int) -> int:
    """Resident memory of a process, from /proc (Linux)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for pid {pid}")


class DaemonProcess:
    def __init__(
        self,
        workdir: Path,
        *,
        args: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        db_path: Path | None = None,
        socket_path: Path | None = None,
        store: str | None = None,
        store_in_env: bool = False,
        cwd: Path | None = None,
    ) -> None:
        self.workdir = workdir
        #: A `postgresql://` DSN: the daemon runs in team mode on it instead of `db_path`.
        self.store = store
        #: Give `store` as `$COORDD_STORE` rather than `--store` (a DSN with its password).
        self.store_in_env = store_in_env
        self.cwd = cwd
        self.db_path = db_path or workdir / "coord.db"
        self.socket_path = socket_path or workdir / "s.sock"
        self.args = args
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = workdir / f"daemon-{time.monotonic_ns()}.log"

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "coordd",
            "serve",
            *self._store_args(),
            "--socket",
            str(self.socket_path),
            *self.args,
        ]

    def _store_args(self) -> list[str]:
        if self.store is None:
            return ["--db", str(self.db_path)]
        return [] if self.store_in_env else ["--store", self.store]

    def start(self, wait: bool = True) -> DaemonProcess:
        env = dict(os.environ)
        env.pop("NOTIFY_SOCKET", None)
        env.pop("LISTEN_FDS", None)
        if self.store is not None and self.store_in_env:
            env["COORDD_STORE"] = self.store
        env.update(self.env or {})
        self.log_path = self.workdir / f"daemon-{time.monotonic_ns()}.log"
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=env,
                cwd=self.cwd,
            )
        if wait:
            try:
                self.wait_ready()
            except BaseException:
                # Not left running for the next test to trip over (as a
                # ResourceWarning from the garbage-collected Popen).
                self.proc.kill()
                self.proc.wait()
                raise
        return self

    def wait_ready(self, timeout_s: float = READY_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"daemon exited {self.proc.returncode}:\n{self.log()}")
            try:
                with Client(self.socket_path, timeout_s=2) as client:
                    client.ping()
                return
            except Exception:
                time.sleep(0.02)
        raise TimeoutError(f"daemon not ready after {timeout_s}s:\n{self.log()}")

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def client(self, timeout_s: float = 30.0) -> Client:
        return Client(self.socket_path, timeout_s=timeout_s).connect()

    def stop(self, timeout_s: float = 20.0) -> int:
        """SIGTERM and wait; returns the exit status."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout_s)

    def kill(self) -> None:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)

    def ensure_dead(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


class RawConnection:
    """Frames by hand, as a client in another language would."""

    def __init__(self, path: Path, timeout_s: float = 10.0) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout_s)
        self.sock.connect(str(path))

    def send_payload(self, payload: bytes) -> None:
        self.sock.sendall(struct.pack(">I", len(payload)) + payload)

    def send(self, message: Any) -> None:
        self.send_payload(json.dumps(message).encode())

    def recv_exact(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise EOFError(f"connection closed after {len(data)} of {n} bytes")
            data += chunk
        return data

    def recv(self) -> Any:
        (length,) = struct.unpack(">I", self.recv_exact(4))
        return json.loads(self.recv_exact(length))

    def call(self, method: str, params: Any = None, request_id: Any = 1) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.recv()

    def is_closed_by_peer(self, timeout_s: float = 5.0) -> bool:
        self.sock.settimeout(timeout_s)
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True
        except TimeoutError:
            return False

    def close(self) -> None:
        self.sock.close()


#: The `coord` console script of the environment running the tests.
COORD = str(Path(sys.executable).parent / "coord")


#: Variables that name the agent or steer `coord`: the tests set the ones they mean.
CALLER_VARS = ("COORD", "CLAUDECODE", "CLAUDE_CODE_", "CODEX_")


def quick_server_ready(directory: Path, deadline_s: float = 120.0) -> None:
    """Until the quick server (issue 46) a first call started in `directory` (beside the
    daemon's socket) accepts: the event a warm start gives, not a guess at its time."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        for path in directory.glob("quick-*.sock"):
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(str(path))
                return
            except OSError:
                pass
            finally:
                probe.close()
        time.sleep(0.05)
    raise AssertionError(f"no quick server in {directory} within {deadline_s} s")


def coord_env(socket: Path, *, autostart: bool = False, **extra: str) -> dict[str, str]:
    """The environment for a `coord` process on `socket`, free of the caller's identity.

    Whoever runs the suite (a Claude Code or Codex tab, CI) must not lend the
    tests its agent name, so every such variable is dropped first.
    """
    environ = {k: v for k, v in os.environ.items() if not k.startswith(CALLER_VARS)}
    environ["COORDD_SOCKET"] = str(socket)
    # In process, as before the quick path (issue 46): a quick server per test's socket
    # directory would start hundreds of warm processes; tests/system/test_quick.py runs
    # the quick path itself, against this one, command by command.
    environ["COORD_QUICK"] = "0"
    if not autostart:
        environ["COORD_NO_AUTOSTART"] = "1"
    environ.update(extra)
    return environ


def coord(
    *args: str,
    socket: Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    autostart: bool = False,
) -> subprocess.CompletedProcess[str]:
    environ = coord_env(socket, autostart=autostart, **(env or {}))
    return subprocess.run(
        [COORD, *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=environ,
        input=stdin,
        check=False,
    )


def in_terminal(argv: list[str], env: dict[str, str], timeout_s: float = 60.0) -> tuple[int, str]:
    """Run `argv` as a person's shell runs it: a session leader whose controlling terminal
    is a fresh pseudo-terminal. Returns its exit status and everything it printed."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: pty.fork made it a session leader on the new terminal
        try:
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    out = b""
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                os.kill(pid, signal.SIGKILL)
                raise AssertionError(f"{argv} did not finish within {timeout_s} s: {out!r}")
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(fd)
        _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace").replace("\r\n", "\n")


def run_coordd(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m coordd ARGS...` run to completion (a refusal, `check`, `backup`)."""
    return subprocess.run(
        [sys.executable, "-m", "coordd", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, **(env or {})},
    )


def git_repo(path: Path) -> Path:
    """A git repository at `path` with one commit (so worktrees can be added)."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(
        ["git", "-C", str(path), "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q",
         "--allow-empty", "-m", "start"],
        check=True,
    )  # fmt: skip
    return path


def coord_without(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`coord ARGS` in a Python where `module` cannot be imported (an extra not installed)."""
    script = (
        f"import sys; sys.modules[{module!r}] = None\n"
        "from coordd_apps.cli import main\n"
        f"sys.exit(main({list(args)!r}))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )


def query_store(daemon: DaemonProcess, sql: str) -> list[tuple[Any, ...]]:
    """Read the daemon's store directly (the SQLite file, or the PostgreSQL database).

    `sql` is plain SQL both dialects read the same way.
    """
    if daemon.store is None:
        import sqlite3

        conn = sqlite3.connect(daemon.db_path)
        try:
            return [tuple(row) for row in conn.execute(sql).fetchall()]
        finally:
            conn.close()
    import psycopg

    with psycopg.connect(daemon.store, autocommit=True) as pg:
        return [tuple(row) for row in pg.execute(sql).fetchall()]


#: Run a command as the child of a host process of its own, through `sh -c` as the
#: hosts run hooks: each call is then another tab (coordd_client.tabs keys a tab by
#: its host process). `FakeHost` keeps one host alive across calls instead.
_HOST_SCRIPT = """
import json, subprocess, sys
for line in sys.stdin:
    job = json.loads(line)
    done = subprocess.run(["sh", "-c", 'exec "$@"', "sh", *job["argv"]], input=job["stdin"],
                          capture_output=True, text=True, env=job["env"], cwd=job["cwd"])
    print(json.dumps({"rc": done.returncode, "out": done.stdout, "err": done.stderr}), flush=True)
"""


class FakeHost:
    """A stand-in host process (a tab): its children are started through `sh -c`,
    as Claude Code and Codex start hooks; `spawn` starts a long-lived child (an
    MCP server) the way a host does, directly."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _HOST_SCRIPT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def run(
        self, argv: list[str], *, env: dict[str, str], stdin: str = "", cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        job = {"argv": argv, "stdin": stdin, "env": env, "cwd": str(cwd) if cwd else None}
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        return subprocess.CompletedProcess(argv, answer["rc"], answer["out"], answer["err"])

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.wait(10)
        self.proc.stdout.close()

    def __enter__(self) -> FakeHost:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_as_new_tab(
    argv: list[str],
    *,
    env: dict[str, str],
    stdin: str = "",
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """`argv` under a host process of its own: a tab that lives for this one call."""
    with FakeHost() as host:
        return host.run(argv, env=env, stdin=stdin, cwd=cwd)


def daemon_pids(home: Path) -> list[int]:
    """Pids of every `coordd serve` process whose `$HOME` is `home` (one user's daemons,
    however they were started: by a test, by a client's autostart, by a host)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            words = (entry / "cmdline").read_bytes().split(b"\0")
            if b"serve" not in words or not any(w.endswith(b"coordd") for w in words):
                continue
            environ = (entry / "environ").read_bytes().split(b"\0")
            if b"HOME=" + os.fsencode(home) in environ:
                found.append(int(entry.name))
    return sorted(found)


def stop_pid(pid: int, started: list[subprocess.Popen[bytes]] | None = None) -> None:
    """SIGTERM (a clean stop), then wait until the process is gone: reaped when it is one
    of `started` (this process's children: a zombie still answers `kill 0`), else until
    its pid no longer answers; SIGKILL after a minute."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    for process in started or []:
        if process.pid == pid:
            process.wait(60)
            return
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def serve_by_default(env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    """The user's daemon as `make run` starts it: `coordd serve`, no flags, in `env`
    (the caller waits for it to announce itself)."""
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            [str(Path(COORD).with_name("coordd")), "serve"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
        )


def wait_exit(pid: int, timeout_s: float) -> bool:
    """Whether `pid` exits within `timeout_s` (woken by its exit: a pidfd, no polling)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], timeout_s)
        return bool(ready)
    finally:
        os.close(fd)


def server_info_or_none(socket_path: Path) -> ServerInfo | None:
    """`server.info` on `socket_path`, or None while nobody answers there (a daemon not
    started yet, or on its way out)."""
    try:
        with Client(socket_path, timeout_s=5) as client:
            return client.server_info()
    except CoordError:
        return None

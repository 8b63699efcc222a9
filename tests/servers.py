"""Real servers from the distribution's packages, thrown away after use: PostgreSQL.

The suite's team-mode tests run one such cluster per session (tests/postgres.py),
and the bench runs the same one as a peer and as team mode's store
(bench/peers.py, bench/team.py, which import it from here). Each server runs
in a scratch directory on a Unix socket, configured to acknowledge a write
only after it is on disk. A server whose binary or Python client is missing
raises `PeerUnavailable` saying why: the suite skips (or fails where CI
requires it), the bench shows the reason.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

#: Debian puts PostgreSQL's server binaries here rather than on PATH.
_PG_BIN_DIRS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)


class PeerUnavailable(Exception):
    """The peer cannot run here; the message says why (shown in BENCHMARKS.md)."""


def which(name: str, extra_dirs: list[Path] | None = None) -> str:
    found = shutil.which(name)
    for directory in extra_dirs or []:
        if found:
            break
        candidate = directory / name
        if candidate.exists():
            found = str(candidate)
    if not found:
        raise PeerUnavailable(f"`{name}` is not installed (make bench-peers installs it as root)")
    return found


def require_package(module: str) -> None:
    """The peer's Python client must be installed (the `bench` extra)."""
    try:
        __import__(module)
    except ImportError as exc:
        raise PeerUnavailable(
            f"the `{module}` Python package is missing (pip install '.[bench]')"
        ) from exc


def launch(argv: list[str], log_path: Path) -> subprocess.Popen[bytes]:
    """Start a server with its output in `log_path` (read it when a peer will not start)."""
    with open(log_path, "ab") as log:
        return subprocess.Popen(argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL)


def wait_for(path: Path, proc: subprocess.Popen[bytes], what: str, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        if proc.poll() is not None:
            raise PeerUnavailable(f"{what} exited with {proc.returncode} at start")
        if time.monotonic() > deadline:
            raise PeerUnavailable(f"{what} did not create {path} within {timeout_s:.0f} s")
        time.sleep(0.05)


#: C.UTF-8: lower() folds non-ASCII letters as Python's str.lower() does (team-mode tests).
_INITDB = ["--no-sync", "-E", "UTF8", "--locale=C.UTF-8"]


def free_tcp_port() -> int:
    """A port nobody listens on at this instant, on 127.0.0.1 and ::1 alike."""
    while True:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
            port = int(probe.getsockname()[1])
        with socket.socket(socket.AF_INET) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port


class PostgresPeer:
    """A throwaway PostgreSQL cluster: fsync on, synchronous_commit on, Unix socket only.

    With `tcp`, it also listens on 127.0.0.1 and ::1, on a free port (its
    socket file then has that port's number); `hba` lines go first in
    pg_hba.conf (initdb's lines trust every local connection).
    """

    name = "postgresql"
    settings = "fsync on, synchronous_commit on, WAL on the same disk"

    def __init__(self, workdir: Path, *, tcp: bool = False, hba: tuple[str, ...] = ()) -> None:
        require_package("psycopg")
        initdb = which("initdb", _PG_BIN_DIRS)
        postgres = which("postgres", _PG_BIN_DIRS)
        self.directory = workdir / "pg"
        self.directory.mkdir()
        data = self.directory / "data"
        # PostgreSQL refuses to run as root: run it as the `postgres` account when we are root.
        self._as_user: list[str] = []
        self.user = pwd.getpwuid(os.getuid()).pw_name
        if os.getuid() == 0:
            try:
                account = pwd.getpwnam("postgres")
            except KeyError as exc:
                raise PeerUnavailable("running as root and there is no `postgres` account") from exc
            os.chown(self.directory, account.pw_uid, account.pw_gid)
            os.chmod(workdir, 0o755)
            self._as_user = ["runuser", "-u", "postgres", "--"]
            self.user = "postgres"
        subprocess.run(
            [*self._as_user, initdb, "-D", str(data), "-A", "trust", "-U", self.user, *_INITDB],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if hba:
            conf = data / "pg_hba.conf"
            conf.write_text("\n".join(hba) + "\n" + conf.read_text())
        self._postgres = postgres
        self._data = data
        self.port = free_tcp_port() if tcp else 5432
        self._listen = "127.0.0.1,::1" if tcp else ""
        self.address = f"host={self.directory} port={self.port} user={self.user} dbname=postgres"
        self.host = str(self.directory)
        self.start()

    def start(self) -> None:
        """Run the server (again, after `stop`: the team-mode fault tests do)."""
        self.proc = launch(
            [
                *self._as_user, self._postgres,
                "-D", str(self._data),
                "-k", str(self.directory),
                "-c", f"listen_addresses={self._listen}",
                "-p", str(self.port),
                "-c", "fsync=on",
                "-c", "synchronous_commit=on",
                "-c", "max_connections=200",
            ],
            self.directory / "postgres.log",
        )  # fmt: skip
        wait_for(self.directory / f".s.PGSQL.{self.port}", self.proc, "postgres")
        self._wait_ready()

    def _wait_ready(self) -> None:
        import psycopg

        deadline = time.monotonic() + 30
        while True:
            try:
                psycopg.connect(self.address).close()
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def url(self, database: str = "postgres") -> str:
        """A `postgresql://` DSN for `coordd serve --store` (the socket directory as host)."""
        port = "" if self.port == 5432 else f"&port={self.port}"
        return f"postgresql://{self.user}@/{database}?host={self.directory}{port}"

    def stop(self) -> None:
        """A fast shutdown: clients are disconnected, as when a server goes away.

        The signal goes to the postmaster itself (runuser does not pass SIGINT on).
        A busy machine can take long over the shutdown checkpoint (a test session
        leaves hundreds of databases): a cluster still up after a minute is stopped
        without one (`immediate`; it is thrown away), then killed.
        """
        try:
            postmaster = int((self._data / "postmaster.pid").read_text().split()[0])
        except (FileNotFoundError, ValueError, IndexError):
            postmaster = None
        for how, wait_s in ((signal.SIGINT, 60), (signal.SIGQUIT, 30)):
            try:
                if postmaster is None:
                    self.proc.terminate()
                else:
                    os.kill(postmaster, how)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(wait_s)
                return
            except subprocess.TimeoutExpired:
                continue
        self.proc.kill()
        self.proc.wait(30)

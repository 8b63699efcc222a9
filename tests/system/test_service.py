"""Running as a user service: socket activation, sd_notify, unit files, `coordd service`."""

from __future__ import annotations

import itertools
import os
import plistlib
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from racing import WORKERS

from coordd.platform.launchd import LAUNCHD_SOCKET_NAME
from coordd_client import Client
from coordd_client.autostart import wait_until_ready
from support import DaemonProcess

REPO = Path(__file__).resolve().parents[2]


def start_activated(workdir: Path, pid_mode: str) -> tuple[subprocess.Popen[bytes], Path, Path]:
    activated = workdir / "activated.sock"
    own = workdir / "own.sock"
    log = open(workdir / "activated.log", "wb")  # noqa: SIM115  (closed with the process)
    proc = subprocess.Popen(
        [
            sys.executable,
            str(WORKERS / "activate.py"),
            str(activated),
            pid_mode,
            "serve",
            "--db",
            str(workdir / "c.db"),
            "--socket",
            str(own),
        ],
        stdout=log,
        stderr=log,
        stdin=subprocess.DEVNULL,
    )
    log.close()
    return proc, activated, own


def test_adopts_the_socket_systemd_passes_and_never_unlinks_it(workdir: Path) -> None:
    proc, activated, own = start_activated(workdir, "self")
    try:
        wait_until_ready(activated)
        assert not own.exists()  # the inherited socket takes precedence over --socket
        with Client(activated) as client:
            assert client.post("via systemd's socket").created
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
        assert activated.exists()  # never unlinked: it belongs to the service manager
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_listen_pid_mismatch_binds_its_own_socket(workdir: Path) -> None:
    proc, _activated, own = start_activated(workdir, "other")
    try:
        wait_until_ready(own)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
        assert not own.exists()  # its own socket, so it cleans it up
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


class NotifyListener:
    """The service manager's end of NOTIFY_SOCKET."""

    def __init__(self, workdir: Path, abstract: bool) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        if abstract:
            name = f"coordd-test-{uuid.uuid4().hex}"
            self.sock.bind(b"\0" + name.encode())
            self.address = "@" + name
        else:
            path = workdir / "notify.sock"
            self.sock.bind(str(path))
            self.address = str(path)

    def next(self, timeout_s: float = 15) -> tuple[float, set[str]]:
        self.sock.settimeout(timeout_s)
        data = self.sock.recv(4096).decode()
        return time.monotonic(), set(data.split("\n"))

    def close(self) -> None:
        self.sock.close()


@pytest.mark.parametrize("abstract", [False, True])
def test_sd_notify_ready_after_listening_and_stopping_on_sigterm(
    workdir: Path, abstract: bool
) -> None:
    listener = NotifyListener(workdir, abstract)
    daemon = DaemonProcess(workdir, env={"NOTIFY_SOCKET": listener.address})
    try:
        daemon.start(wait=False)
        _, fields = listener.next()
        assert "READY=1" in fields and any(f.startswith("STATUS=") for f in fields)
        with Client(daemon.socket_path, timeout_s=5) as client:  # live at READY, no retry
            assert client.ping().pong
        daemon.proc.send_signal(signal.SIGTERM)  # type: ignore[union-attr]
        _, fields = listener.next()
        assert "STOPPING=1" in fields
        assert daemon.proc.wait(20) == 0  # type: ignore[union-attr]
    finally:
        daemon.ensure_dead()
        listener.close()


def test_watchdog_pings_only_while_the_writer_answers(workdir: Path) -> None:
    listener = NotifyListener(workdir, abstract=False)
    daemon = DaemonProcess(
        workdir, env={"NOTIFY_SOCKET": listener.address, "WATCHDOG_USEC": "400000"}
    )
    try:
        daemon.start(wait=False)
        assert "READY=1" in listener.next()[1]

        def ping_times(seconds: float) -> list[float]:
            times = []
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                try:
                    at, fields = listener.next(timeout_s=max(0.01, end - time.monotonic()))
                except TimeoutError:
                    break
                if "WATCHDOG=1" in fields:
                    times.append(at)
            return times

        healthy = ping_times(1.5)
        assert len(healthy) >= 4  # every 0.2 s (half of 0.4 s)
        # Wedge the writer: another process holds the write lock; the writer
        # waits out busy_timeout again and again, and the watchdog goes quiet.
        blocker = sqlite3.connect(daemon.db_path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        window_start = time.monotonic()
        wedged = ping_times(4.0)
        window_end = time.monotonic()
        blocker.execute("ROLLBACK")
        blocker.close()
        # The longest silence in the window, counting its edges.
        marks = [window_start, *wedged, window_end]
        longest_silence = max(b - a for a, b in itertools.pairwise(marks))
        assert longest_silence > 1.5, wedged
        assert len(ping_times(1.5)) >= 4  # back to normal once the lock is gone
    finally:
        daemon.ensure_dead()
        listener.close()


def test_unit_files_pass_systemd_analyze_verify(workdir: Path) -> None:
    tool = shutil.which("systemd-analyze")
    if tool is None:
        pytest.skip("systemd-analyze is not installed (.ci/run installs it where apt-get works)")
    home, runtime, units = workdir / "home", workdir / "run", workdir / "units"
    (home / ".local" / "bin").mkdir(parents=True)
    runtime.mkdir(mode=0o700)
    units.mkdir()
    # The shipped unit runs %h/.local/bin/coordd: give the check a home where it exists.
    (home / ".local" / "bin" / "coordd").symlink_to(Path(sys.executable).parent / "coordd")
    env = {**os.environ, "HOME": str(home), "XDG_RUNTIME_DIR": str(runtime)}

    def verify(*names: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [tool, "verify", "--user", "--man=no", *(f"./{n}" for n in names)],
            cwd=units,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    (units / "broken.service").write_text("[Service]\nType=bogus\nExecStart=relative/path\n")
    broken = verify("broken.service")
    if broken.returncode == 0:
        pytest.skip(f"systemd-analyze cannot load units here: {broken.stderr.strip()[:200]}")
    for name in ("coordd.socket", "coordd.service"):
        shutil.copy(REPO / "systemd" / name, units / name)
    shipped = verify("coordd.socket", "coordd.service")
    assert shipped.returncode == 0, shipped.stderr
    assert shipped.stderr.strip() == ""


def test_shipped_units_say_what_the_protocol_needs() -> None:
    socket_unit = (REPO / "systemd" / "coordd.socket").read_text()
    for line in ("ListenStream=%t/coordd/coordd.sock", "SocketMode=0600", "DirectoryMode=0700"):
        assert line in socket_unit.splitlines()
    service = (REPO / "systemd" / "coordd.service").read_text().splitlines()
    for line in (
        "Type=notify",
        "Restart=on-failure",
        "UMask=0077",
        "ExecStart=%h/.local/bin/coordd serve",
    ):
        assert line in service
    assert any(line.startswith("WatchdogSec=") for line in service)
    assert any(line.startswith("LimitNOFILE=") for line in service)


def test_launchd_plist_parses_as_shipped_and_matches_the_code() -> None:
    with open(REPO / "launchd" / "coordd.plist", "rb") as handle:
        plist = plistlib.load(handle)
    assert plist["Label"] == "org.coordd.coordd"
    assert plist["ProgramArguments"][1:] == ["serve"]
    sockets = plist["Sockets"]
    assert list(sockets) == [LAUNCHD_SOCKET_NAME]
    assert sockets[LAUNCHD_SOCKET_NAME]["SockPathMode"] == 0o600  # 384 in the plist
    assert isinstance(sockets[LAUNCHD_SOCKET_NAME]["SockPathName"], str)
    assert plist["KeepAlive"] == {"SuccessfulExit": False}
    assert isinstance(plist["StandardErrorPath"], str)


def dry_run(workdir: Path, platform: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HOME": str(workdir / "home"),
        "XDG_CONFIG_HOME": str(workdir / "home" / ".config"),
    }
    coordd = str(Path(sys.executable).parent / "coordd")
    command = [coordd, "service", "install", "--dry-run", "--platform", platform]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)


def test_service_install_dry_run_systemd(workdir: Path) -> None:
    result = dry_run(workdir, "systemd")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    unit_dir = workdir / "home" / ".config" / "systemd" / "user"
    assert (
        f"# file {unit_dir / 'coordd.socket'}" in out
        and f"# file {unit_dir / 'coordd.service'}" in out
    )
    coordd = Path(sys.executable).parent / "coordd"
    assert f"ExecStart={coordd.resolve()} serve" in out.splitlines()
    assert "ListenStream=%t/coordd/coordd.sock" in out
    assert out.index("# run systemctl --user daemon-reload") < out.index(
        "# run systemctl --user enable --now coordd.socket"
    )
    assert not (workdir / "home").exists()  # a dry run changes nothing


def test_service_install_dry_run_launchd(workdir: Path) -> None:
    result = dry_run(workdir, "launchd")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    plist_path = workdir / "home" / "Library" / "LaunchAgents" / "org.coordd.coordd.plist"
    start = out.index(f"# file {plist_path}\n") + len(f"# file {plist_path}\n")
    plist = plistlib.loads(out[start : out.index(f"# end of {plist_path}")].encode())
    assert plist["ProgramArguments"] == [
        str((Path(sys.executable).parent / "coordd").resolve()),
        "serve",
    ]
    sock = Path(plist["Sockets"][LAUNCHD_SOCKET_NAME]["SockPathName"])
    assert sock.name == "coordd.sock" and f"# directory {sock.parent} (mode 0700)" in out
    assert f"# run launchctl bootstrap gui/{os.getuid()} {plist_path}" in out
    assert not (workdir / "home").exists()

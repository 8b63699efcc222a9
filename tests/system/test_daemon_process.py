"""PROTOCOL.md section 8: single instance, stale sockets, modes, clean stop."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

from support import DaemonProcess, short_tmpdir


def serve_once(db: str | Path, sock: str | Path) -> subprocess.CompletedProcess[str]:
    """Run `coordd serve` expecting it to refuse to start; return its outcome."""
    return subprocess.run(
        [sys.executable, "-m", "coordd", "serve", "--db", str(db), "--socket", str(sock)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_socket_and_directory_modes(workdir: Path) -> None:
    nested = workdir / "run" / "coordd"
    process = DaemonProcess(workdir, socket_path=nested / "s.sock").start()
    try:
        assert stat.S_IMODE(os.stat(nested).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(nested / "s.sock").st_mode) == 0o600
        assert stat.S_IMODE(os.stat(process.db_path).st_mode) == 0o600
    finally:
        assert process.stop() == 0


def test_sigterm_and_sigint_exit_zero_and_remove_the_socket(workdir: Path) -> None:
    for signum in (signal.SIGTERM, signal.SIGINT):
        process = DaemonProcess(workdir).start()
        with process.client() as client:
            client.post("survives the restart")
        assert process.proc is not None
        process.proc.send_signal(signum)
        assert process.proc.wait(20) == 0
        assert not process.socket_path.exists()
        assert "stopped cleanly" in process.log()
    # The final TRUNCATE checkpoint left no WAL content behind.
    wal = Path(str(process.db_path) + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0


def test_second_daemon_on_the_same_database_exits_1(daemon: DaemonProcess, workdir: Path) -> None:
    other_socket = workdir / "other.sock"
    second = serve_once(str(daemon.db_path), str(other_socket))
    assert second.returncode == 1
    assert "in use by another coordd" in second.stderr and str(daemon.pid) in second.stderr
    with daemon.client() as client:
        assert client.ping().pong  # the first is untouched


def test_second_daemon_on_a_live_socket_exits_1(daemon: DaemonProcess) -> None:
    elsewhere = short_tmpdir()
    second = serve_once(str(elsewhere / "x.db"), str(daemon.socket_path))
    assert second.returncode == 1
    assert "already listening" in second.stderr
    assert daemon.socket_path.exists()
    with daemon.client() as client:
        assert client.ping().pong


def test_stale_socket_from_a_killed_daemon_is_replaced(workdir: Path) -> None:
    first = DaemonProcess(workdir).start()
    assert first.proc is not None
    first.proc.send_signal(signal.SIGKILL)
    first.proc.wait(10)
    assert first.socket_path.exists()  # left behind by the crash
    second = DaemonProcess(workdir).start()
    try:
        with second.client() as client:
            assert client.ping().pong
    finally:
        assert second.stop() == 0


def test_refuses_a_path_that_is_not_a_socket(workdir: Path) -> None:
    path = workdir / "regular-file"
    path.write_text("precious")
    result = serve_once(str(workdir / "d.db"), str(path))
    assert result.returncode == 1 and "not a socket" in result.stderr
    assert path.read_text() == "precious"


def test_too_long_socket_path_is_a_clear_error(workdir: Path) -> None:
    long_path = workdir / ("x" * 120) / "s.sock"
    result = serve_once(str(workdir / "d.db"), str(long_path))
    assert result.returncode == 1 and "socket path is" in result.stderr


def test_peer_uid_check_refuses_other_users(daemon: DaemonProcess) -> None:
    if os.getuid() != 0:
        import pytest

        pytest.skip("needs root to connect as another uid")
    script = (
        "import os, socket, sys\n"
        "os.setgid(65534); os.setuid(65534)\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "s.settimeout(5)\n"
        "s.connect(sys.argv[1])\n"
        "try:\n"
        '    s.sendall(b\'\\x00\\x00\\x00\\x2b{"jsonrpc":"2.0","id":1,"method":"ping"}\')\n'
        "    print('refused' if s.recv(100) == b'' else 'answered')\n"
        "except OSError:\n"
        "    print('refused')\n"
    )
    # The socket is 0600, so open it up briefly: the uid check must still refuse.
    os.chmod(daemon.socket_path, 0o666)
    os.chmod(daemon.socket_path.parent, 0o755)
    result = subprocess.run(
        [sys.executable, "-c", script, str(daemon.socket_path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.stdout.strip() == "refused", result
    assert "refused a connection from uid 65534" in daemon.log()


def test_python_dash_m_and_console_script_agree() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "coordd", "--version"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    script = Path(sys.executable).parent / "coordd"
    out2 = subprocess.run(
        [str(script), "--version"], capture_output=True, text=True, timeout=30, check=False
    )
    assert out.stdout.strip() == out2.stdout.strip() and out.stdout.startswith("coordd ")

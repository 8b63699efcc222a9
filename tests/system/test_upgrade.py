"""An upgrade under a running daemon, quick server and shared MCP server.

coordd is "installed" by copying its packages into a directory of their own (the
`PYTHONPATH` every process here gets); rewriting one of those files is the upgrade.
The daemon keeps running the code it loaded: `coord doctor` and `coord whoami` say
so with the command that restarts it, and say nothing once it runs the installed
code again. A quick server started on the old code retires by itself, and the
next quick call starts one on the new.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_processes import INITIALIZE, shared_servers
from support import COORD, DaemonProcess, coord_env, quick_server_ready, short_tmpdir, wait_exit

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = [
    ROOT / "src" / "coordd",
    *(
        ROOT / "clients" / "python" / "src" / name
        for name in ("coordd_wire", "coordd_client", "coordd_apps")
    ),
]
#: A generous bound on waiting for a process to end: only a hang reaches it.
HANG_S = 60.0


def install(site: Path) -> None:
    for package in PACKAGES:
        shutil.copytree(package, site / package.name, ignore=shutil.ignore_patterns("__pycache__"))


def upgrade(site: Path, package: str) -> None:
    """What `pip install` of a newer coordd does to a file: new bytes, a new mtime."""
    init = site / package / "__init__.py"
    init.write_text(init.read_text() + "\n# a newer release\n")


def run(env: dict[str, str], *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [COORD, *args, "--json"], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def upgrade_finding(env: dict[str, str]) -> dict[str, Any] | None:
    document = run(env, "doctor")
    found = [c for c in document["checks"] if c["section"] == "daemon" and c["check"] == "upgrade"]
    assert len(found) <= 1
    return found[0] if found else None


@pytest.fixture
def root() -> Any:
    path = short_tmpdir("up")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_doctor_and_whoami_say_the_daemon_is_older_until_it_is_restarted(root: Path) -> None:
    site = root / "site"
    install(site)
    env = {"PYTHONPATH": str(site), "HOME": str(root)}
    daemon = DaemonProcess(root, env=env).start()
    try:
        shell = coord_env(daemon.socket_path) | env
        assert upgrade_finding(shell) is None
        assert run(shell, "whoami")["board"]["older"] is None

        upgrade(site, "coordd")
        finding = upgrade_finding(shell)
        assert finding is not None and finding["status"] == "missing", finding
        assert finding["fix"] == f"kill {daemon.pid}"
        assert finding["running"] != finding["installed"]
        older = run(shell, "whoami")["board"]["older"]
        assert older is not None and older["command"] == f"kill {daemon.pid}"

        board = run(shell, "whoami")["board"]["board_id"]
        os.kill(daemon.pid, signal.SIGTERM)  # the fix, as the finding gives it
        assert daemon.proc is not None and daemon.proc.wait(HANG_S) == 0
        daemon.start()
        assert upgrade_finding(shell) is None
        assert run(shell, "whoami")["board"]["board_id"] == board  # the same board
    finally:
        daemon.ensure_dead()


def test_a_quick_server_on_old_code_retires_and_the_next_call_starts_a_new_one(
    root: Path,
) -> None:
    site = root / "site"
    install(site)
    env = {"PYTHONPATH": str(site), "HOME": str(root)}
    daemon = DaemonProcess(root, env=env).start()
    directory = daemon.socket_path.parent
    try:
        shell = coord_env(daemon.socket_path) | env | {"COORD_QUICK": "1"}
        run(shell, "whoami")  # starts the quick server for this code
        quick_server_ready(directory)
        (old,) = list(directory.glob("quick-*.sock"))

        upgrade(site, "coordd_apps")
        end = time.monotonic() + HANG_S
        while old.exists() and time.monotonic() < end:
            time.sleep(0.1)
        assert not old.exists(), "the quick server on the old code is still serving"

        run(shell, "whoami")
        quick_server_ready(directory)
        (new,) = list(directory.glob("quick-*.sock"))
        assert new != old
    finally:
        for lock in directory.glob("quick-*.sock"):
            lock.unlink(missing_ok=True)  # its server sees it gone and ends
        daemon.ensure_dead()


def open_tab(env: dict[str, str]) -> subprocess.Popen[bytes]:
    """`coord mcp` as a host starts it, its session begun (initialize answered)."""
    tab = subprocess.Popen(
        [COORD, "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert tab.stdin is not None and tab.stdout is not None
    tab.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    tab.stdin.flush()
    ready, _, _ = select.select([tab.stdout], [], [], HANG_S)
    assert ready and b'"result"' in tab.stdout.readline()
    tab.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
    tab.stdin.flush()
    return tab


def close_tab(tab: subprocess.Popen[bytes]) -> None:
    """The host closes the tab: stdin ends, the relay exits."""
    assert tab.stdin is not None and tab.stdout is not None
    tab.stdin.close()
    assert tab.wait(HANG_S) == 0
    tab.stdout.close()


def test_a_shared_mcp_server_on_old_code_serves_its_tabs_then_retires(root: Path) -> None:
    site = root / "site"
    install(site)
    env = {"PYTHONPATH": str(site), "HOME": str(root)}
    daemon = DaemonProcess(root, env=env).start()
    directory = daemon.socket_path.parent
    tabs: list[subprocess.Popen[bytes]] = []
    try:
        shell = coord_env(daemon.socket_path) | env | {"COORD_AGENT": "me"}
        tabs.append(open_tab(shell))
        (old,) = shared_servers(directory)

        upgrade(site, "coordd_apps")
        tabs.append(open_tab(shell))  # a tab opened now gets a server of the new code
        servers = shared_servers(directory)
        assert old in servers and len(servers) == 2, servers
        assert pid_alive(old)  # its tab is still connected: it keeps serving it

        close_tab(tabs.pop(0))
        assert wait_exit(old, HANG_S)  # no relay left, and not its code installed: it retires
        (new,) = shared_servers(directory)
        assert new != old
    finally:
        for tab in tabs:
            close_tab(tab)
        for pid in shared_servers(directory):
            os.kill(pid, signal.SIGTERM)
        daemon.ensure_dead()


def pid_alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()

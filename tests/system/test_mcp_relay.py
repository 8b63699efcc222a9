"""`coord mcp` as a tab starts it: the relay, the one shared server behind it, and the
stdio reader's answers to lines that are not messages (issues 32 and 29 item 15).

Real processes on real pipes and sockets: a `RawTab` is a host that writes lines to
`coord mcp`'s stdin and reads its stdout. Every wait is bounded only by what a hang
would cross.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_processes import INITIALIZE, shared_servers
from support import COORD, DaemonProcess, coord_env, wait_exit

#: A hang, not a slow machine, crosses this.
HANG_S = 120.0
#: The relay may load this many modules beyond a bare interpreter's. It loads 16:
#: coordd_apps with its entry and argv, coordd_wire, coordd_wire.build and .location, the relay's
#: package and its three modules, and _json, _socket, fcntl, select, zlib and __future__.
#: Counted, not timed.
RELAY_MODULES = 24
#: Modules the relay must never load: each costs a bare interpreter's start or more.
HEAVY = ("mcp", "mcp_types", "pydantic", "pydantic_core", "trio", "anyio", "msgspec")


class RawTab:
    """`coord mcp` on pipes, as a host runs it, read line by line."""

    def __init__(self, env: dict[str, str], *prefix: str, cwd: Path | None = None) -> None:
        self.process = subprocess.Popen(
            [*prefix, COORD, "mcp"] if prefix else [COORD, "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()
        self._stderr: str | None = None

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(b"")

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.process.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def answer(self) -> dict[str, Any]:
        line = self._lines.get(timeout=HANG_S)
        assert line, f"coord mcp closed its stdout: {self.stderr()}"
        found: dict[str, Any] = json.loads(line)
        return found

    def start_session(self) -> dict[str, Any]:
        """initialize, initialized, tools/list: the tool list."""
        self.send(INITIALIZE)
        assert "result" in self.answer()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        return self.answer()

    def call(self, tool: str, ident: int = 3, **arguments: Any) -> dict[str, Any]:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": ident,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            }
        )
        answer = self.answer()
        assert answer["id"] == ident, answer
        structured: dict[str, Any] = answer["result"]["structuredContent"]
        return structured

    def close(self) -> int:
        """The host closes the tab: stdin ends; the exit status."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.finish()

    def finish(self) -> int:
        """Wait for the exit; keep stderr; close the pipes."""
        code = self.process.wait(timeout=HANG_S)
        self._reader.join(timeout=HANG_S)
        assert self.process.stdout is not None and self.process.stderr is not None
        self.process.stdout.close()
        self._stderr = self.process.stderr.read().decode(errors="replace")
        self.process.stderr.close()
        if self.process.stdin is not None and not self.process.stdin.closed:
            self.process.stdin.close()
        return code

    def stderr(self) -> str:
        """What it wrote to stderr (once it has exited and `finish` ran)."""
        return self._stderr or ""


def relay_env(daemon: DaemonProcess, **extra: str) -> dict[str, str]:
    env = coord_env(daemon.socket_path, COORD_PROJECT="/relay-repo")
    env.update(extra)
    return env


MODES = {"relay": {}, "in-process": {"COORD_MCP_INPROCESS": "1"}}


@pytest.mark.parametrize("mode", MODES)
def test_a_line_that_is_not_json_is_answered_and_the_session_goes_on(
    daemon: DaemonProcess, mode: str
) -> None:
    """Before: the SDK's stdio reader dropped it without a word."""
    tab = RawTab(relay_env(daemon, COORD_AGENT="me", **MODES[mode]))
    tab.send(b"this is not JSON\n")
    assert tab.answer() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error: the line is not JSON"},
    }
    tab.send(b'{"jsonrpc": "2.0", "id": 7, "no": "method"}\n')
    refused = tab.answer()
    assert refused["id"] == 7 and refused["error"]["code"] == -32600
    assert tab.start_session()["result"]["tools"]
    assert tab.call("whoami")["agent"] == "me"
    assert tab.close() == 0


@pytest.mark.parametrize("mode", MODES)
def test_an_overlong_line_is_answered_and_dropped_unheld(daemon: DaemonProcess, mode: str) -> None:
    """Before: a line was buffered whole, however long. Now one over 4 MiB is answered
    and dropped as it arrives: 64 MiB of it leave the reader's peak memory far below
    64 MiB above where it was."""
    tab = RawTab(relay_env(daemon, COORD_AGENT="me", **MODES[mode]))
    assert tab.start_session()["result"]["tools"]
    reader = tab.process.pid  # the relay, or the in-process server: whichever reads stdin
    before = _status_kib(reader, "VmRSS")
    chunk = b"x" * (1 << 20)
    tab.send(b'{"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"pad": "')
    for _ in range(64):
        tab.send(chunk)
    tab.send(b'"}}\n')
    answer = tab.answer()
    assert answer["id"] is None and answer["error"]["code"] == -32600, answer
    assert "4 MiB" in answer["error"]["message"]
    assert tab.call("whoami", ident=10)["agent"] == "me"
    assert _status_kib(reader, "VmHWM") - before < 32 * 1024
    assert tab.close() == 0


def _status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


def test_the_relay_loads_no_sdk_and_few_modules(daemon: DaemonProcess) -> None:
    """Counted in the relay process itself (`-X importtime` lists every import)."""
    bare = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "pass"],
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    tab = RawTab(relay_env(daemon, COORD_AGENT="me"), sys.executable, "-X", "importtime")
    assert tab.start_session()["result"]["tools"]
    assert tab.call("whoami")["agent"] == "me"
    assert tab.close() == 0
    loaded = _imported(tab.stderr())
    heavy = sorted(m for m in loaded if m.split(".")[0] in HEAVY)
    assert not heavy, heavy
    extra = loaded - _imported(bare)
    assert len(extra) <= RELAY_MODULES, sorted(extra)


def _imported(importtime: str) -> set[str]:
    return {
        line.rsplit("|", 1)[1].strip()
        for line in importtime.splitlines()
        if line.startswith("import time:") and not line.rstrip().endswith("package")
    }


def test_unless_running_joins_a_running_server_and_never_starts_one(
    daemon: DaemonProcess,
) -> None:
    """`COORD_MCP_INPROCESS=unless-running` (coord doctor's probes): with no shared server
    the tab is served in-process and none is started; with one running, the tab is
    relayed to it (the tab's process loads no SDK)."""
    directory = daemon.socket_path.parent
    alone = RawTab(relay_env(daemon, COORD_AGENT="me", COORD_MCP_INPROCESS="unless-running"))
    assert alone.start_session()["result"]["tools"]
    assert alone.call("whoami")["agent"] == "me"
    assert alone.close() == 0
    assert not shared_servers(directory) and not list(directory.glob("mcp-*.sock"))

    first = RawTab(relay_env(daemon, COORD_AGENT="first"))  # a tab: it starts one
    assert first.start_session()["result"]["tools"]
    (server,) = shared_servers(directory)
    env = relay_env(daemon, COORD_AGENT="me", COORD_MCP_INPROCESS="unless-running")
    joined = RawTab(env, sys.executable, "-X", "importtime")
    assert joined.start_session()["result"]["tools"]
    assert joined.call("whoami")["agent"] == "me"
    assert joined.close() == 0
    heavy = sorted(m for m in _imported(joined.stderr()) if m.split(".")[0] in HEAVY)
    assert not heavy, heavy
    assert shared_servers(directory) == [server]
    assert first.close() == 0


def test_tabs_starting_at_once_share_one_server_and_keep_their_names(
    daemon: DaemonProcess,
) -> None:
    sessions = [f"{n:08x}-4380-4f6e-9a1b-0123456789ab" for n in range(1, 5)]
    tabs = [RawTab(relay_env(daemon, CLAUDE_CODE_SESSION_ID=s)) for s in sessions]
    for tab in tabs:
        tab.send(INITIALIZE)
    for tab in tabs:
        assert "result" in tab.answer()
    names = [tab.call("whoami")["agent"] for tab in tabs]
    assert names == [f"claude-{s[:8]}4380" for s in sessions]
    servers = shared_servers(daemon.socket_path.parent)
    assert len(servers) == 1, servers
    assert len(list(daemon.socket_path.parent.glob("mcp-*.sock"))) == 1
    assert [tab.close() for tab in tabs] == [0, 0, 0, 0]


def test_the_shared_server_exits_when_idle_and_when_its_socket_goes(
    daemon: DaemonProcess,
) -> None:
    tab = RawTab(relay_env(daemon, COORD_AGENT="me", COORD_MCP_IDLE_S="1"))
    assert tab.start_session()["result"]["tools"]
    (server,) = shared_servers(daemon.socket_path.parent)
    assert tab.close() == 0
    assert wait_exit(server, HANG_S)
    assert not list(daemon.socket_path.parent.glob("mcp-*.sock"))  # it cleaned up

    tab = RawTab(relay_env(daemon, COORD_AGENT="me"))  # idle: ten minutes
    assert tab.start_session()["result"]["tools"]
    assert tab.close() == 0
    (server,) = shared_servers(daemon.socket_path.parent)
    (socket_file,) = daemon.socket_path.parent.glob("mcp-*.sock")
    socket_file.unlink()  # as when a test's directory, or the runtime dir, is removed
    assert wait_exit(server, HANG_S)


def test_a_dead_shared_server_ends_the_tab_saying_so(daemon: DaemonProcess) -> None:
    tab = RawTab(relay_env(daemon, COORD_AGENT="me"))
    assert tab.start_session()["result"]["tools"]
    (server,) = shared_servers(daemon.socket_path.parent)
    os.kill(server, signal.SIGKILL)
    assert tab.finish() == 1  # the host sees it fail, not hang
    assert "ended this tab's session" in tab.stderr()


def test_a_directory_others_may_write_serves_the_tab_in_process(
    daemon: DaemonProcess, workdir: Path
) -> None:
    """The relay never puts its socket where another user could swap it."""
    open_dir = workdir / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    env = relay_env(daemon, COORD_AGENT="me")
    env["COORDD_SOCKET"] = str(open_dir / "coordd.sock")  # nobody serves it: a tool error
    tab = RawTab(env)
    assert tab.start_session()["result"]["tools"]
    assert tab.close() == 0
    assert "serving this tab in-process" in tab.stderr()
    assert not shared_servers(open_dir) and not list(open_dir.glob("mcp-*"))


def _children(pid: int) -> dict[int, str]:
    """`pid`'s children and their states (`Z`: ended, not reaped)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # gone while we looked
            if int(fields[1]) == pid:
                found[int(entry.name)] = fields[0]
    return found


def test_a_shared_server_that_ends_is_never_left_unreaped(daemon: DaemonProcess) -> None:
    """The tab that started a shared server may outlive it: here the server fails at its
    start (an idle timeout it cannot read) and the tab is served in-process for its whole
    session. The server is never the relay's child, so its end is reaped by init, not
    kept by the tab as a zombie for hours. Before: it stayed the relay's `<defunct>`
    child for as long as the tab lived."""
    tab = RawTab(relay_env(daemon, COORD_AGENT="me", COORD_MCP_IDLE_S="never"))
    assert tab.start_session()["result"]["tools"]
    assert tab.call("whoami")["agent"] == "me"  # the session goes on, in-process
    relay = tab.process.pid
    deadline = time.monotonic() + HANG_S / 2  # only to catch a zombie that stays
    while any(state == "Z" for state in _children(relay).values()):
        assert time.monotonic() < deadline, _children(relay)
        time.sleep(0.05)
    assert tab.close() == 0
    assert "exited while starting" in tab.stderr()

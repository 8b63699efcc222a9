"""What the MCP server a tab starts costs: spawn to tool list, and memory (issue 32).

Three ways a tab's `coord mcp` runs, each timed from spawn to the answer to
`tools/list` (after `initialize` and `notifications/initialized`, on raw pipes
as a host writes them), as a ratio to a bare start of this venv's interpreter
measured in the same rounds (the rounds alternate, so drift cancels):

- in-process (`$COORD_MCP_INPROCESS=1`): the SDK loaded in the tab's own
  process, as every tab did before the relay;
- relay, warm: the shared server already runs (every tab after the first);
- relay, cold: no shared server yet (the first tab), so the relay starts one.

Memory: the relay's RSS with its session open, the shared server's, and ten
tabs open at once (ten relays and one server, against ten in-process servers).
Also the import profile of each: modules loaded beyond a bare interpreter's,
from `-X importtime`.

`python -m bench.mcp_start [--rounds 9] [--output FILE]` runs it alone and
writes the rows; `make bench` includes it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bench.harness import Daemon
from mcp_processes import INITIALIZE, shared_servers

COORD = str(Path(sys.executable).parent / "coord")
OPENING = (
    json.dumps(INITIALIZE).encode() + b"\n",
    b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n'
    b'{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}\n',
)
TABS = 10


class Tab:
    """One `coord mcp` on pipes with its session opened (initialize, tools/list)."""

    def __init__(self, env: dict[str, str], coord: str = COORD) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [coord, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(OPENING[0])
        self.process.stdin.flush()
        assert b'"result"' in self.process.stdout.readline()
        self.process.stdin.write(OPENING[1])
        self.process.stdin.flush()
        assert b'"tools"' in self.process.stdout.readline()
        self.seconds = time.perf_counter() - self.started

    def close(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)
        self.process.stdout.close()


def rss_kib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return float(line.split()[1])
    return 0.0


def stop_shared(directory: Path) -> None:
    """Stop the shared server this bench started there (the cold rows start afresh)."""
    for pid in shared_servers(directory):
        os.kill(pid, signal.SIGTERM)
        with contextlib.suppress(ChildProcessError, OSError):
            fd = os.pidfd_open(pid)
            select.select([fd], [], [], 30)
            os.close(fd)
    for stale in directory.glob("mcp-*.sock"):
        stale.unlink()


def bare_start() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - started


def import_profile(env: dict[str, str]) -> tuple[int, float]:
    """(modules beyond a bare interpreter's, their import time in ms) for `coord mcp`
    with `env`, from `-X importtime` in the process the tab starts."""

    def loaded(command: list[str], stdin: bytes) -> dict[str, int]:
        done = subprocess.run(command, input=stdin, capture_output=True, env=env, check=False)
        out: dict[str, int] = {}
        for line in done.stderr.decode(errors="replace").splitlines():
            if line.startswith("import time:") and not line.endswith("package"):
                own, _, name = line[len("import time:") :].split("|")
                out[name.strip()] = int(own)
        return out

    bare = loaded([sys.executable, "-X", "importtime", "-c", "pass"], b"")
    mcp = loaded([sys.executable, "-X", "importtime", COORD, "mcp"], b"".join(OPENING))
    extra = {name: us for name, us in mcp.items() if name not in bare}
    return len(extra), sum(extra.values()) / 1000


@contextlib.contextmanager
def bench_daemon() -> Iterator[tuple[Path, Daemon]]:
    workdir = Path(tempfile.mkdtemp(prefix="bmcp", dir="/tmp"))
    daemon = Daemon(workdir)
    try:
        yield workdir, daemon
    finally:
        stop_shared(workdir)
        daemon.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def measure_mcp_start(rounds: int = 9, before: str | None = None) -> dict[str, float]:
    """`before`: another install's `coord` (e.g. the main checkout's, before the relay)
    timed in the same rounds, to check that in-process stands for it."""
    out: dict[str, float] = {"mcp_start_rounds": rounds}
    with bench_daemon() as (workdir, daemon):
        env = {**os.environ, "COORDD_SOCKET": str(daemon.socket), "COORD_NO_AUTOSTART": "1"}
        env.update(COORD_PROJECT="/bench/mcp-start", COORD_AGENT="bench-mcp-start")
        inprocess = {**env, "COORD_MCP_INPROCESS": "1"}
        times: dict[str, list[float]] = {"bare": [], "inprocess": [], "cold": [], "warm": []}
        if before is not None:
            times["other"] = []
        for _ in range(rounds):
            times["bare"].append(bare_start())
            if before is not None:
                tab = Tab(env, before)
                times["other"].append(tab.seconds)
                tab.close()
            tab = Tab(inprocess)
            times["inprocess"].append(tab.seconds)
            tab.close()
            stop_shared(workdir)
            tab = Tab(env)
            times["cold"].append(tab.seconds)
            tab.close()
            tab = Tab(env)
            times["warm"].append(tab.seconds)
            tab.close()
        bare = statistics.median(times["bare"])
        out["mcp_bare_python_ms"] = bare * 1000
        for key in [k for k in times if k != "bare"]:
            median = statistics.median(times[key])
            out[f"mcp_{key}_start_ms"] = median * 1000
            out[f"mcp_{key}_start_x"] = median / bare
        out.update(_memory(workdir, env, inprocess))
        for key, with_env in (("relay", env), ("inprocess", inprocess)):
            count, ms = import_profile(with_env)
            out[f"mcp_{key}_modules"] = count
            out[f"mcp_{key}_import_ms"] = ms
    return out


def _memory(workdir: Path, env: dict[str, str], inprocess: dict[str, str]) -> dict[str, float]:
    out: dict[str, float] = {}
    tabs = [Tab(env) for _ in range(TABS)]
    try:
        relays = [rss_kib(tab.process.pid) for tab in tabs]
        (server,) = shared_servers(workdir)
        out["mcp_relay_rss_kib"] = statistics.median(relays)
        out["mcp_shared_rss_kib"] = rss_kib(server)
        out["mcp_ten_relays_kib"] = sum(relays) + rss_kib(server)
    finally:
        for tab in tabs:
            tab.close()
    tabs = [Tab(inprocess) for _ in range(TABS)]
    try:
        servers = [rss_kib(tab.process.pid) for tab in tabs]
        out["mcp_inprocess_rss_kib"] = statistics.median(servers)
        out["mcp_ten_inprocess_kib"] = sum(servers)
    finally:
        for tab in tabs:
            tab.close()
    return out


def render(m: dict[str, float], rounds: int) -> str:
    mib = 1024
    return "\n".join(
        [
            "## What an agent pays: the MCP server a tab starts (issue 32)",
            "",
            f"Spawn to tool list (initialize, initialized, tools/list on raw pipes), medians of"
            f" {rounds} alternating rounds, as a ratio to a bare `python -c pass` of the same"
            f" venv in the same rounds ({m['mcp_bare_python_ms']:,.0f} ms here).",
            "",
            "| what a tab starts | spawn to tool list | x bare start | RSS per tab |",
            "| --- | ---: | ---: | ---: |",
            f"| before: in-process server (the SDK in every tab) |"
            f" {m['mcp_inprocess_start_ms']:,.0f} ms | {m['mcp_inprocess_start_x']:.1f}x |"
            f" {m['mcp_inprocess_rss_kib'] / mib:,.1f} MiB |",
            f"| after: relay, shared server warm (every tab after the first) |"
            f" {m['mcp_warm_start_ms']:,.0f} ms | {m['mcp_warm_start_x']:.1f}x |"
            f" {m['mcp_relay_rss_kib'] / mib:,.1f} MiB |",
            f"| after: relay, cold (the first tab starts the shared server) |"
            f" {m['mcp_cold_start_ms']:,.0f} ms | {m['mcp_cold_start_x']:.1f}x | - |",
            *(
                [
                    f"| before, checked: another install's `coord mcp` |"
                    f" {m['mcp_other_start_ms']:,.0f} ms | {m['mcp_other_start_x']:.1f}x | - |"
                ]
                if "mcp_other_start_ms" in m
                else []
            ),
            f"| the shared server itself (one per user) | - | - |"
            f" {m['mcp_shared_rss_kib'] / mib:,.1f} MiB |",
            "",
            f"| {TABS} tabs open at once | RSS in all |",
            "| --- | ---: |",
            f"| before: {TABS} in-process servers | {m['mcp_ten_inprocess_kib'] / mib:,.0f} MiB |",
            f"| after: {TABS} relays and one shared server |"
            f" {m['mcp_ten_relays_kib'] / mib:,.0f} MiB |",
            "",
            "| import profile of the process a tab starts | modules beyond a bare start |"
            " their import time |",
            "| --- | ---: | ---: |",
            f"| before: in-process | {m['mcp_inprocess_modules']:,.0f} |"
            f" {m['mcp_inprocess_import_ms']:,.0f} ms |",
            f"| after: relay | {m['mcp_relay_modules']:,.0f} |"
            f" {m['mcp_relay_import_ms']:,.1f} ms |",
            "",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mcp_start")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--output", type=Path, default=None)
    parser.add_argument("--before", default=None, help="another install's coord to time too")
    args = parser.parse_args()
    measured = measure_mcp_start(args.rounds, args.before)
    text = render(measured, args.rounds)
    if args.output is not None:
        args.output.write_text(text)
    print(text)
    print(json.dumps(measured, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

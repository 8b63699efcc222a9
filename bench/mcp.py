"""What a tool call through `coord mcp` costs next to the same call over the socket,
and what the MCP server costs to start and to keep (the `mcp` extra)."""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import trio

from bench.report import percentile
from coordd_client import Client

PROJECT = "/bench/mcp"


def _children_rss_kib(name: str) -> float:
    """RSS of this process's children whose command line mentions `name`."""
    total = 0.0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields.get("PPid", "0")) == os.getpid() and name in cmdline:
            total += float(fields.get("VmRSS", "0 kB").split()[0])
    return total


def measure_mcp(socket: Path, claims: int = 300, starts: int = 5) -> dict[str, float]:
    from mcp import Client as MCPClient
    from mcp.client.stdio import StdioServerParameters

    coord = str(Path(sys.executable).parent / "coord")
    env = {**os.environ, "COORDD_SOCKET": str(socket), "COORD_PROJECT": PROJECT}
    env["COORD_AGENT"] = "bench-mcp"
    params = StdioServerParameters(command=coord, args=["mcp"], env=env)
    with Client(socket, agent="bench-mcp", project=PROJECT) as client:
        ids = [client.post(f"mcp {n}").task.id for n in range(2 * claims)]
        socket_latencies = []
        for task_id in ids[claims:]:
            started = time.perf_counter()
            client.claim(task_id)
            socket_latencies.append(time.perf_counter() - started)
    out: dict[str, float] = {}

    async def main() -> None:
        start_times = []
        for _ in range(starts):
            started = time.perf_counter()
            async with MCPClient(params, mode="legacy") as c:
                await c.list_tools()
                start_times.append(time.perf_counter() - started)
        async with MCPClient(params, mode="legacy") as c:
            latencies = []
            for task_id in ids[:claims]:
                started = time.perf_counter()
                result = await c.call_tool("claim_task", {"id": task_id})
                latencies.append(time.perf_counter() - started)
                assert not result.is_error
            out["mcp_server_rss_kib"] = _children_rss_kib("mcp")
        out["mcp_start_s"] = statistics.median(start_times)
        out["mcp_claim_p50_us"] = percentile(latencies, 0.5) * 1e6
        out["mcp_claim_p99_us"] = percentile(latencies, 0.99) * 1e6

    trio.run(main)
    out["socket_claim_p50_us"] = percentile(socket_latencies, 0.5) * 1e6
    out["socket_claim_p99_us"] = percentile(socket_latencies, 0.99) * 1e6
    return out

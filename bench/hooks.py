"""How long each `coord hook` takes as a host runs it: a fresh process, stdin JSON in,
answer out (hosts give hooks a few seconds; Claude Code's SessionEnd 1.5 s in all)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.report import percentile
from coordd_client import Client

PROJECT = "/bench/hooks"
SESSION = "bench0000-1111-4f6e-8b5a-000000000001"


def _run(event: str, stdin: str, env: dict[str, str]) -> float:
    coord = str(Path(sys.executable).parent / "coord")
    started = time.perf_counter()
    subprocess.run(
        [coord, "hook", event, "--host", "claude"],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    return time.perf_counter() - started


def measure_hooks(socket: Path, runs: int = 40) -> dict[str, float]:
    env = {**os.environ, "COORDD_SOCKET": str(socket), "COORD_PROJECT": PROJECT}
    env.pop("COORD_AGENT", None)
    env["COORD_NO_AUTOSTART"] = "1"
    with Client(socket, agent="bench-other", project=PROJECT) as client:
        client.reserve(["src/**"])
        for n in range(50):
            client.post(f"hook bench {n}")
    base = {"session_id": SESSION, "cwd": PROJECT, "transcript_path": "/t"}
    edit = {**base, "hook_event_name": "PreToolUse", "tool_name": "Edit",
            "tool_input": {"file_path": f"{PROJECT}/src/a.py"}}  # fmt: skip
    payloads = {
        "session-start": {**base, "hook_event_name": "SessionStart", "source": "startup"},
        "pre-edit": edit,
        "session-end": {**base, "hook_event_name": "SessionEnd", "reason": "other"},
    }
    out: dict[str, float] = {}
    python = [sys.executable, "-c", "pass"]
    bare = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(python, check=True)
        bare.append(time.perf_counter() - started)
    out["hook_python_start_p50_ms"] = percentile(bare, 0.5) * 1000
    for event, stdin in payloads.items():
        times = [_run(event, json.dumps(stdin), env) for _ in range(runs)]
        out[f"hook_{event}_p50_ms"] = percentile(times, 0.5) * 1000
        out[f"hook_{event}_p99_ms"] = percentile(times, 0.99) * 1000
    return out

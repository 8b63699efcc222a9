"""How long an idle tab waits to be woken: a message (1.2 section 12) against an assignment.

Claude Code's `Stop` hook (`coord hook wake`, `asyncRewake`) is the waiter: a fresh
process per round, as the host starts it, that exits 2 (wake the tab) when the board
has news for it. Measured from just before the call that wakes it (`message.send`, or
`task.post` with the tab as assignee) to the waiter's exit, which takes in the commit,
the hub's fan-out, the waiter's read (and, for a message, its ack and rendering) and
its exit. The two kinds alternate round by round in one run, so the ratio holds on a
busy machine though the milliseconds drift.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from coordd_client import Client, methods

SESSION = "aaaaaaaa-1111-4f6e-8b5a-000000000001"
#: The name `identify` gives the session above on Claude Code (`claude-<8 hex><4 hex>`).
AGENT = "claude-aaaaaaaa1111"
#: A waiter that is not woken ends after this long (a hang, not a measurement).
MAX_WAIT_S = 120


def measure_tab_wake(socket: Path, rounds: int) -> dict[str, float]:
    """p50 wake latency by message and by assignment (ms), and their ratio."""
    workdir = Path(tempfile.mkdtemp(prefix="tw", dir="/tmp"))
    repo = workdir / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    env = {
        **os.environ,
        "COORDD_SOCKET": str(socket),
        "XDG_STATE_HOME": str(workdir / "state"),
        "COORD_NO_AUTOSTART": "1",
        "CLAUDE_CODE_SESSION_ATTENDED": "1",
    }
    stdin = json.dumps({"session_id": SESSION, "cwd": str(repo), "hook_event_name": "Stop"})
    latencies: dict[str, list[float]] = {"message": [], "assignment": []}
    with Client(socket, agent="codex-3", project=str(repo)) as client:
        for n in range(rounds):
            for kind in ("message", "assignment") if n % 2 == 0 else ("assignment", "message"):
                latencies[kind].append(_one_wake(client, kind, n, stdin, env))
    message = statistics.median(latencies["message"])
    assignment = statistics.median(latencies["assignment"])
    return {
        "tab_wake_message_p50_ms": message,
        "tab_wake_assignment_p50_ms": assignment,
        "tab_wake_ratio": message / assignment,
    }


def _one_wake(client: Client, kind: str, n: int, stdin: str, env: dict[str, str]) -> float:
    coord = str(Path(sys.executable).with_name("coord"))
    waiter = subprocess.Popen(
        [coord, "hook", "wake", "--host", "claude", "--max-wait", str(MAX_WAIT_S)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert waiter.stdin is not None
    waiter.stdin.write(stdin)
    waiter.stdin.close()
    waiter.stdin = None  # `communicate` below must not flush it again
    _until_waiting(client)
    start = time.perf_counter()
    if kind == "message":
        client.send_message(f"ping {n}", to=AGENT)
    else:
        client.post(f"task {n}", assignee=AGENT)
    _, err = waiter.communicate(timeout=MAX_WAIT_S + 30)
    elapsed_ms = (time.perf_counter() - start) * 1000
    assert waiter.returncode == 2, f"the waiter did not wake the tab: {err}"
    return elapsed_ms


def _until_waiting(client: Client) -> None:
    """Until the waiter's `task.wait` and `message.wait` are both registered."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        info = client.send(methods.server_info().as_type(dict))
        if info.get("waiters") and info.get("message_waiters"):
            return
        time.sleep(0.005)
    raise TimeoutError("the waiter never registered both of its waits")

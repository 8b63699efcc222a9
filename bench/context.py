"""What an agent is given: the size of the session-start context and of the MCP `board`
answer, for boards of 10, 1,000 and 100,000 tasks with 50 agents at work (issue 32).

Sizes are characters, and characters / 4 is the token estimate. Each board is a real
daemon's, filled through the socket: 50 agents, each posting and claiming a few tasks
and one holding a reservation; the reader ("me") holds three claims and two
reservations and has two tasks assigned; the rest is pending work of mixed priority,
with a few acks. The context is read as Claude Code reads it (`coord hook
session-start`, a fresh process) and the board as a host's MCP client does (`coord
mcp` over stdio), and the time each took is recorded beside its size.

`python -m bench.context [sizes]` runs this part alone, e.g. `10,1000,100000`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

from coordd_client.aio import AsyncClient

PROJECT = "/bench/context"
ME = "claude-0123456789ab"
AGENTS = 50
SIZES = (10, 1_000, 100_000)
#: Posts in flight at once while filling a board.
WINDOW = 1000


async def _fill(socket: Path, tasks: int) -> None:
    async with AsyncClient.connect(socket) as client:

        async def post(n: int) -> None:
            await client.post(
                f"bench task {n}: fix the flaky parser test in module {n % 97}",
                project=PROJECT,
                priority=n % 7,
                agent=f"agent-{n % AGENTS:02d}",
            )

        # Mine: 3 claims, 2 assigned, 1 ack; the agents' own 3 each on the larger boards.
        busy = tasks >= 1_000
        others = max(0, tasks - 6 - (3 * AGENTS if busy else 0))
        for start in range(0, others, WINDOW):
            async with trio.open_nursery() as nursery:
                for n in range(start, min(others, start + WINDOW)):
                    nursery.start_soon(post, n)
        for n in range(AGENTS):  # every agent seen just now, one claim (tasks permitting) each
            agent = f"agent-{n:02d}"
            if busy:
                for k in range(3):
                    task = await client.post(f"{agent} works on {k}", project=PROJECT, agent=agent)
                    if k == 0:
                        await client.claim(task.task.id, agent)
            else:
                await client.heartbeat(agent)
        await client.reserve(["src/parser/**"], agent="agent-00", project=PROJECT)
        for k in range(3):
            task = await client.post(f"my claim {k}", project=PROJECT, agent=ME)
            await client.claim(task.task.id, ME)
        await client.reserve(["src/lexer/**", "docs/lexer.md"], agent=ME, project=PROJECT)
        for k in range(2):
            await client.post(f"assigned to me {k}", project=PROJECT, assignee=ME)
        await client.post("parser fix landed", project=PROJECT, kind="ack", state="done")


def fill_board(socket: Path, tasks: int) -> None:
    trio.run(_fill, socket, tasks)


def _environment(socket: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COORD", "CLAUDE"))}
    env.update(COORDD_SOCKET=str(socket), COORD_NO_AUTOSTART="1", COORD_PROJECT=PROJECT)
    env.update(COORD_AGENT=ME, **extra)
    return env


def session_start(socket: Path, coord: str, extra: dict[str, str]) -> tuple[int, float]:
    """The context's size in characters, and the seconds the hook took."""
    stdin = json.dumps({"session_id": "s", "cwd": "/", "hook_event_name": "SessionStart"})
    started = time.perf_counter()
    done = subprocess.run(
        [coord, "hook", "session-start", "--host", "claude"],
        input=stdin,
        capture_output=True,
        text=True,
        env=_environment(socket, extra),
        timeout=600,
        check=True,
    )
    took = time.perf_counter() - started
    return len(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]), took


def mcp_board(socket: Path, coord: str, extra: dict[str, str]) -> tuple[int, float]:
    """The `board` answer's size in characters (its text block), and the call's seconds."""
    from mcp import Client as MCPClient
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=coord, args=["mcp"], env=_environment(socket, extra))
    out: list[tuple[int, float]] = []

    async def ask() -> None:
        with trio.fail_after(600):
            async with MCPClient(params) as client:
                started = time.perf_counter()
                result = await client.call_tool("board", {})
                took = time.perf_counter() - started
        text = "".join(getattr(block, "text", "") for block in result.content)
        out.append((len(text), took))

    trio.run(ask)
    return out[0]


def measure_context(
    workdir: Path,
    sizes: tuple[int, ...] = SIZES,
    variants: dict[str, dict[str, str]] | None = None,
) -> dict[str, float]:
    """`context_<n>_chars`, `board_<n>_chars` and their seconds, per board size `n`.

    `variants`: name -> more environment for the measured processes, each measured on
    the same boards under `<name>_...` keys (a `PYTHONPATH` naming another checkout's
    client measures that one: before and after a change, one fill of each board)."""
    from bench.harness import Daemon

    coord = str(Path(sys.executable).parent / "coord")
    out: dict[str, float] = {}
    for tasks in sizes:
        daemon = Daemon(workdir, name=f"ctx{tasks}")
        try:
            fill_board(daemon.socket, tasks)
            for name, extra in (variants or {"": {}}).items():
                key = f"{name}_" if name else ""
                chars, took = session_start(daemon.socket, coord, extra)
                out[f"{key}context_{tasks}_chars"], out[f"{key}context_{tasks}_s"] = chars, took
                chars, took = mcp_board(daemon.socket, coord, extra)
                out[f"{key}board_{tasks}_chars"], out[f"{key}board_{tasks}_s"] = chars, took
        finally:
            daemon.stop()
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    sizes = tuple(int(n) for n in args[0].split(",")) if args and args[0][0].isdigit() else SIZES
    # `--before DIR`: also measure the client found there (an older checkout's src).
    variants: dict[str, dict[str, str]] = {"": {}}
    if "--before" in args:
        variants = {"before": {"PYTHONPATH": args[args.index("--before") + 1]}, "after": {}}
    with tempfile.TemporaryDirectory(prefix="cbc", dir="/tmp") as workdir:
        figures = measure_context(Path(workdir), sizes, variants)
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

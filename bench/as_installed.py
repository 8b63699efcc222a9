"""What an agent pays per call, as users install coordd and as hosts run it.

Every hook a host waits for, and the everyday commands an agent's shell runs, are a fresh
process per call: the figure is each one's time as a ratio to a bare start of the same
venv's interpreter (`python -c pass`), measured just before it, pair by pair, so the load
of a shared machine moves both halves alike (target: <= 2x). Measured as a user has it:

- the tree installed from a wheel into a fresh venv (`bench/installed.py`), never the
  dev venv's editable install;
- each hook run through the exact command line `coord setup claude` / `codex` / `git`
  registered, by `sh -c` (as Claude Code and Codex run a hook command; git runs its hook
  file), with the JSON the host sends on stdin; each command as `sh -c '<coord> claim N'`;
- on a board of 1,000 tasks with 50 agents holding a claim each, in the project the hooks
  run in, and again on 10,000 tasks (the same calls must cost the same: flat).

Several trees can be measured side by side (`--tree NAME=PATH`), alternated pair by pair.
`python -m bench.as_installed [runs] [--tree NAME=PATH ...] [--sizes 1000,10000]`.
"""

from __future__ import annotations

import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from bench.harness import ROOT, Daemon
from bench.hooks import _git, _timed
from bench.installed import install, registrations

#: The hooks measured: `host event` as `registrations` names them. `wake` is left out: it
#: waits in the background of a Stop for minutes, and no host waits for it.
HOOKS = (
    "claude session-start", "claude pre-edit", "claude post-tool", "claude deliver",
    "claude session-end", "git pre-commit", "codex session-start", "codex pre-edit",
    "codex deliver", "codex turn-end",
)  # fmt: skip
#: The everyday commands, each run as an agent's shell runs it.
COMMANDS = ("claim", "done", "next", "ls")
#: Boards: tasks in the project the calls run in.
SIZES = (1_000, 10_000)
#: Agents on the board, each holding a claim.
AGENTS = 50
#: What each call may cost, as a ratio to a bare start, on the first board.
TARGET = 2.0
SESSIONS = {"claude": "bench0000-1111-4f6e-8b5a-000000000001",
            "codex": "019d1afb-b2c7-7e21-9f00-00000000bbbb"}  # fmt: skip
PATCH = "*** Begin Patch\n*** Update File: src/a.py\n@@\n-a = 1\n+a = 2\n*** End Patch\n"


def payload(what: str, repo: Path) -> str:
    """The stdin a host sends with `what` (`host event`), as recorded from each host."""
    host, event = what.split()
    if host == "git":
        return ""
    base: dict[str, object] = {"session_id": SESSIONS[host], "cwd": str(repo)}
    if host == "claude":
        base |= {"transcript_path": "/nonexistent/t.jsonl", "permission_mode": "default"}
        edit = {"tool_name": "Edit", "tool_input": {"file_path": str(repo / "src" / "a.py")}}
    else:
        base |= {"transcript_path": None, "model": "gpt-5.5-codex", "turn_id": "turn-7"}
        edit = {"tool_name": "apply_patch", "tool_input": {"command": PATCH}}
    shapes: dict[str, dict[str, object]] = {
        "session-start": {"hook_event_name": "SessionStart", "source": "startup"},
        "pre-edit": {"hook_event_name": "PreToolUse", **edit},
        "post-tool": {"hook_event_name": "PostToolUse", **edit},
        "deliver": {"hook_event_name": "UserPromptSubmit", "prompt": "go on"},
        "session-end": {"hook_event_name": "SessionEnd", "reason": "other"},
        "turn-end": {"hook_event_name": "Stop", "stop_hook_active": False},
    }
    return json.dumps(base | shapes[event])


def build_board(socket: Path, project: str, tasks: int) -> list[int]:
    """`tasks` tasks posted in `project`, `AGENTS` agents holding one each; the ids left."""
    import trio

    from coordd_client.aio import AsyncClient

    ids: list[int] = []

    async def fill() -> None:
        async with AsyncClient.connect(socket, agent="bench-poster", project=project) as client:

            async def one(n: int) -> None:
                ids.append((await client.post(f"board task {n}", priority=n % 5)).task.id)

            for start in range(0, tasks, 500):
                async with trio.open_nursery() as nursery:
                    for n in range(start, min(tasks, start + 500)):
                        nursery.start_soon(one, n)
        for n in range(AGENTS):
            async with AsyncClient.connect(socket, agent=f"agent-{n}", project=project) as a:
                claimed = (await a.claim_next()).task
                assert claimed is not None, "a board of fewer tasks than agents"
                ids.remove(claimed.id)

    trio.run(fill)
    return sorted(ids)


def environment(root: Path, socket: Path, home: Path) -> dict[str, str]:
    """A host's environment for its hooks: none of the bench's own Python settings (an
    installed `coord` must not import this tree), the bench's home, state and daemon."""
    drop = ("COORD", "CLAUDE", "CODEX", "GIT_", "PYTHON", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    return env | {
        "HOME": str(home),
        "XDG_STATE_HOME": str(root / "state"),
        "COORDD_SOCKET": str(socket),
        "COORD_NO_AUTOSTART": "1",
        "CLAUDE_CODE_SESSION_ATTENDED": "1",
    }


class Install:
    """One tree's venv, its home (where its setup wrote) and its registered commands."""

    def __init__(self, name: str, venv: Path, root: Path, socket: Path, repo: Path) -> None:
        self.name = name
        self.python = str(venv / "bin" / "python")
        self.coord = shlex.quote(str(venv / "bin" / "coord"))
        home = root / f"home-{name or 'tree'}"
        home.mkdir()
        self.env = environment(root, socket, home)
        self.lines = registrations(venv, home, repo)
        self.agent_env = self.env | {"COORD_AGENT": "bench-agent"}

    def hook(self, what: str) -> list[str]:
        return ["sh", "-c", self.lines[what]]

    def command(self, word: str, task: int) -> list[str]:
        arg = f" {task}" if word in ("claim", "done") else ""
        return ["sh", "-c", f"{self.coord} {word}{arg}"]

    def wait_quick(self, repo: Path, deadline_s: float = 120.0) -> None:
        """Until this install's quick server takes calls (its first call started it)."""
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            probe = subprocess.run(
                ["sh", "-c", f"{self.coord} whoami"], env=self.env | {"COORD_QUICK": "require"},
                cwd=repo, capture_output=True, timeout=60, check=False,
            )  # fmt: skip
            if probe.returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError(f"no quick server for {self.name or 'the tree'} in {deadline_s} s")


def measure_board(
    installs: Mapping[str, Path], tasks: int, runs: int, workdir: Path
) -> dict[str, float]:
    """Every hook and command of every install on a board of `tasks`, alternated pair by
    pair; keys `agent_[NAME_]TASKS_WHAT_{ratio,p50_ms}` and `..._bare_p50_ms`."""
    root = Path(tempfile.mkdtemp(prefix=f"b{tasks}-", dir=workdir))
    daemon = Daemon(root)
    try:
        repo = root / "repo"
        (repo / "src").mkdir(parents=True)
        (repo / "src" / "a.py").write_text("a = 1\n")
        _git(repo, "init", "-q")
        _git(repo, "add", "src/a.py")
        free = build_board(daemon.socket, str(repo.resolve()), tasks)
        sides = [Install(n, v, root, daemon.socket, repo) for n, v in installs.items()]
        for side in sides:  # warm: the quick server, the tab records, the caches
            for what in HOOKS:
                _timed(side.hook(what), payload(what, repo), side.env, repo)
            side.wait_quick(repo)
        pairs: dict[str, list[tuple[float, float]]] = {}
        for _ in range(runs):
            for what in HOOKS:
                for side in sides:
                    b = _timed([side.python, "-c", "pass"], "", side.env, repo)
                    h = _timed(side.hook(what), payload(what, repo), side.env, repo)
                    pairs.setdefault(f"{side.name}|{what}", []).append((b, h))
            for side in sides:
                task = free.pop()
                for word in COMMANDS:
                    b = _timed([side.python, "-c", "pass"], "", side.env, repo)
                    c = _timed(side.command(word, task), "", side.agent_env, repo)
                    pairs.setdefault(f"{side.name}|cli {word}", []).append((b, c))
    finally:
        daemon.stop()
    out: dict[str, float] = {}
    for label, measured in pairs.items():
        name, _, what = label.partition("|")
        key = f"agent_{name + '_' if name else ''}{tasks}_{what.replace(' ', '_')}"
        out[f"{key}_ratio"] = statistics.median(c / b for b, c in measured)
        out[f"{key}_p50_ms"] = statistics.median(c for _, c in measured) * 1000
        out[f"{key}_bare_p50_ms"] = statistics.median(b for b, _ in measured) * 1000
    return out


def measure(
    runs: int = 9, trees: Mapping[str, Path] | None = None, sizes: Sequence[int] = SIZES
) -> dict[str, float]:
    """Each tree installed (cached), then every board size in turn."""
    trees = trees or {"": ROOT}
    installs = {name: install(path) for name, path in trees.items()}
    out: dict[str, float] = {"agent_runs": float(runs)}
    with tempfile.TemporaryDirectory(prefix="cba", dir="/tmp") as workdir:
        for tasks in sizes:
            out |= measure_board(installs, tasks, runs, Path(workdir))
    return out


def labels() -> list[str]:
    return [*HOOKS, *(f"cli {word}" for word in COMMANDS)]


def over_target(figures: Mapping[str, float], name: str = "") -> dict[str, float]:
    """The calls above `TARGET` on the first board (empty: every one within)."""
    prefix = f"agent_{name + '_' if name else ''}{SIZES[0]}_"
    return {
        key: value
        for key, value in figures.items()
        if key.startswith(prefix) and key.endswith("_ratio") and value > TARGET
    }


def render(
    figures: Mapping[str, float], names: Sequence[str] = ("",), sizes: Sequence[int] = SIZES
) -> list[str]:
    """The table: each call's ratio per install and board size, and its p50."""
    sizes = [s for s in sizes if any(f"_{s}_" in key for key in figures)]
    head = ["call"]
    for name in names:
        head += [f"{name + ' ' if name else ''}{size:,} tasks" for size in sizes]
    head.append(f"p50 at {sizes[0]:,}" if sizes else "p50")
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for what in labels():
        cells = [what.replace("cli ", "`coord ") + ("`" if what.startswith("cli") else "")]
        for name in names:
            for size in sizes:
                key = f"agent_{name + '_' if name else ''}{size}_{what.replace(' ', '_')}_ratio"
                cells.append(f"{figures[key]:.2f}x" if key in figures else "-")
        first = f"agent_{names[-1] + '_' if names[-1] else ''}{sizes[0]}_{what.replace(' ', '_')}"
        cells.append(f"{figures.get(first + '_p50_ms', 0):,.0f} ms")
        lines.append("| " + " | ".join(cells) + " |")
    bare = [v for k, v in figures.items() if k.endswith("_bare_p50_ms")]
    if bare:
        lines += [
            "",
            f"Bare `python -c pass` of the installed venv: p50 {statistics.median(bare):,.0f} ms.",
        ]
    return lines


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    runs = int(next((a for a in args if a.isdigit()), "9"))
    given = [args[i + 1] for i, a in enumerate(args) if a == "--tree"]
    trees = {n: Path(p).resolve() for n, _, p in (g.partition("=") for g in given)} or {"": ROOT}
    sizes: tuple[int, ...] = SIZES
    if "--sizes" in args:
        sizes = tuple(int(s) for s in args[args.index("--sizes") + 1].split(","))
    load = os.getloadavg()
    figures = measure(runs, trees, sizes)
    print(json.dumps(figures, indent=1))
    print(f"\nload average at the start {load[0]:.1f}, at the end {os.getloadavg()[0]:.1f}\n")
    print("\n".join(render(figures, list(trees), sizes)))
    over = {n: over_target(figures, n) for n in trees}
    return 1 if any(over.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""A process per call, side by side with the daemon-less peer an agent would otherwise pick
(issue 46): 16 agents each claiming tasks of their own with `coord claim`, against 16 each
taking locks of their own with coordinationhub's `acquire-lock` (PyPI; SQLite in a storage
directory, a process per call, no server), in alternated rounds of one run; and one task
raced by 16 processes at once, counting the winners.

Each round starts every worker behind one barrier (a file the workers wait to see), so
the two tools share the machine's load alike; the figure that counts is the ratio of
their calls per second in the same run.

`python -m bench.cli_peers [rounds] [calls]`: coordinationhub is installed into
`bench/.peers/coordinationhub` from PyPI on first use (pinned in bench/peer_venvs.py).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench import peer_venvs
from bench.harness import Daemon
from coordd_client import Client

WORKERS = 16
#: Raced tasks: agents at once -> rounds (a fresh task each round, both tools).
RACES = {16: 3, 64: 2}

#: One worker: wait for the barrier, then run each command in turn; print its seconds.
WORKER = """
import json, os, subprocess, sys, time
barrier, commands = sys.argv[1], json.loads(sys.argv[2])
while not os.path.exists(barrier):
    time.sleep(0.001)
started = time.perf_counter()
codes = [subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
         for c in commands]
print(json.dumps({"seconds": time.perf_counter() - started, "codes": codes}))
"""


def peer_cli() -> Path:
    """coordinationhub's console script, installed into a venv of its own if absent."""
    why = peer_venvs.install("coordinationhub")
    if why is not None:
        raise RuntimeError(why)
    return peer_venvs.venv("coordinationhub") / "bin" / "coordinationhub"


@dataclass
class Round:
    """Calls per second over the round's wall time, and every call's exit status."""

    rate: float
    codes: list[int]


def run_round(commands: list[list[list[str]]], env: dict[str, str], cwd: Path) -> Round:
    """Every worker's commands at once behind one barrier: calls per second, exit codes."""
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        barrier = Path(tmp) / "go"
        argv = [[sys.executable, "-c", WORKER, str(barrier), json.dumps(m)] for m in commands]
        workers = [
            subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env, cwd=cwd)
            for command in argv
        ]
        time.sleep(0.5)  # every worker started and waiting (it polls the barrier)
        started = time.perf_counter()
        barrier.touch()
        outs = [json.loads(w.communicate(timeout=600)[0]) for w in workers]
        wall = time.perf_counter() - started
    calls = sum(len(mine) for mine in commands)
    return Round(calls / wall, [int(code) for out in outs for code in out["codes"]])


def measure(rounds: int = 3, calls: int = 10) -> dict[str, float]:
    coord = str(Path(sys.executable).parent / "coord")
    hub = str(peer_cli())
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="cbp", dir="/tmp") as workdir:
        work = Path(workdir)
        daemon = Daemon(work)
        try:
            env = {k: v for k, v in os.environ.items() if not k.startswith("COORD")}
            env |= {"COORDD_SOCKET": str(daemon.socket), "COORD_NO_AUTOSTART": "1"}
            with Client(daemon.socket, project=str(work)) as client:
                ids = [client.post(f"t{n}").task.id for n in range(WORKERS * calls * rounds + 1)]
                raced = [client.post(f"raced {n}").task.id for n in range(sum(RACES.values()))]
            # A first call starts the quick server; wait until the path is warm.
            subprocess.run([coord, "claim", str(ids.pop()), "--agent", "warm"], env=env, cwd=work,
                           capture_output=True, check=False)  # fmt: skip
            from bench.hooks import wait_for_quick

            wait_for_quick(env)
            storage = work / "hub"
            ours, theirs, peer_failed = [], [], 0
            for r in range(rounds):
                coord_cmds = [
                    [[coord, "claim", str(ids.pop()), "--agent", f"a{w}"] for _ in range(calls)]
                    for w in range(WORKERS)
                ]
                hub_cmds = [
                    [[hub, "acquire-lock", f"r{r}/w{w}/doc{c}", f"a{w}", "--storage-dir",
                      str(storage)] for c in range(calls)]
                    for w in range(WORKERS)
                ]  # fmt: skip
                mine = run_round(coord_cmds, env, work)
                peer = run_round(hub_cmds, env, work)
                assert set(mine.codes) == {0}, mine.codes  # each its own task: every call won
                # The peer's own failures (its SQLite busy under 16 processes) are counted,
                # not fatal: its rate counts them as calls, which flatters it.
                peer_failed += sum(1 for code in peer.codes if code != 0)
                ours.append(mine.rate)
                theirs.append(peer.rate)
            out["cli16_coord_per_s"] = statistics.median(ours)
            out["cli16_peer_per_s"] = statistics.median(theirs)
            out["cli16_ratio"] = statistics.median(a / b for a, b in zip(ours, theirs, strict=True))
            out["cli16_peer_failed"] = float(peer_failed)
            out["cli16_calls_each"] = float(rounds * WORKERS * calls)
            for agents, count in RACES.items():
                ours_won, theirs_won = [], []
                for r in range(count):
                    task = raced.pop()
                    race = run_round([[[coord, "claim", str(task), "--agent", f"r{w}"]] for w in
                                      range(agents)], env, work)  # fmt: skip
                    hub_race = run_round([[[hub, "acquire-lock", f"contended{agents}/{r}", f"r{w}",
                                            "--storage-dir", str(storage)]] for w in range(agents)],
                                         env, work)  # fmt: skip
                    ours_won.append(race.codes.count(0))
                    theirs_won.append(hub_race.codes.count(0))
                for who, won in (("coord", ours_won), ("peer", theirs_won)):
                    out[f"race{agents}_{who}_winners"] = float(won[0])
                    out[f"race{agents}_{who}_min"] = float(min(won))
                    out[f"race{agents}_{who}_max"] = float(max(won))
                    out[f"race{agents}_{who}_wrong"] = float(sum(1 for w in won if w != 1))
                    out[f"race{agents}_{who}_rounds"] = float(len(won))
        finally:
            daemon.stop()
    return out


def main(argv: list[str] | None = None) -> int:
    args = [int(a) for a in (sys.argv[1:] if argv is None else argv)]
    rounds = args[0] if args else 3
    calls = args[1] if len(args) > 1 else 10
    print(json.dumps(measure(rounds, calls), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Landing throughput (issue 35): a queue of 10 small branches, landed by 10 `coord land`
processes started at once against a real daemon and a real repository.

    .venv/bin/python -m bench.landing [--branches 10] [--check CMD]

Each branch changes one file of its own in its own worktree; `main` is checked
out in the main worktree. Reported: the wall time from the start of the
processes to the last landing, landings per minute, and, from the daemon's
events, the median time one branch holds the landing slot (`land.started` to
`land.landed`: the rebase, the check, the fast-forward) and the median gap
between one landing and the next start (the queue's own cost: the wake-up and
the next lander's git start).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from bench.harness import Daemon
from coordd_client import Client

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@example.com",
    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@example.com",
}  # fmt: skip
COORD = str(Path(sys.executable).parent / "coord")


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, **GIT_ENV})  # fmt: skip


def make_repo(root: Path, branches: int) -> Path:
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README").write_text("bench\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "start")
    for n in range(branches):
        place = root / f"b{n}"
        git(repo, "worktree", "add", "-q", "-b", f"b{n}", str(place))
        (place / f"file{n}.txt").write_text(f"{n}\n")
        git(place, "add", ".")
        git(place, "commit", "-q", "-m", f"b{n}")
    return repo


def _at(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def measure(branches: int, check: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        root = Path(tmp)
        repo = make_repo(root, branches)
        git(repo, "config", "coord.landCheck", check)
        daemon = Daemon(root)
        try:
            env = {**os.environ, **GIT_ENV, "COORDD_SOCKET": str(daemon.socket),
                   "COORD_NO_AUTOSTART": "1"}  # fmt: skip
            started = time.monotonic()
            landers = [
                subprocess.Popen(
                    [
                        COORD,
                        "land",
                        f"b{n}",
                        "--agent",
                        f"lander{n}",
                        "--project",
                        str(repo),
                        "--wait",
                        "600",
                    ],
                    cwd=root / f"b{n}",
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for n in range(branches)
            ]
            failed = [p.communicate()[1] for p in landers if p.wait() != 0]
            wall = time.monotonic() - started
            if failed:
                message = f"{len(failed)} landing(s) failed: {failed[0]}"
                raise SystemExit(message)
            with Client(daemon.socket, project=str(repo)) as client:
                events = client.events_since(types=["land.started", "land.landed"]).events
        finally:
            daemon.stop()
    starts = [_at(e.at) for e in events if e.type == "land.started"]
    ends = [_at(e.at) for e in events if e.type == "land.landed"]
    holds = [end - start for start, end in zip(starts, ends, strict=True)]
    gaps = [start - end for end, start in zip(ends, starts[1:], strict=False)]
    return {
        "wall_s": wall,
        "per_minute": branches / wall * 60,
        "hold_p50_s": statistics.median(holds),
        "gap_p50_s": statistics.median(gaps) if gaps else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--branches", type=int, default=10)
    parser.add_argument("--check", default="true", help="the check each landing runs")
    args = parser.parse_args()
    found = measure(args.branches, args.check)
    print(f"landing {args.branches} branches (check: {args.check!r}):")
    print(f"  wall {found['wall_s']:.2f} s, {found['per_minute']:.1f} landings/min")
    print(f"  slot held per landing (p50) {found['hold_p50_s'] * 1000:.0f} ms;"
          f" gap to the next start (p50) {found['gap_p50_s'] * 1000:.0f} ms")  # fmt: skip


if __name__ == "__main__":
    main()

"""What coord costs a real host's run: `claude -p` in a repository set up with coord,
against the same run in one that is not, alternated in the same bench run.

The host is the host tier's pinned Claude Code (tests/hosts, `npm ci` by `make
bench`), driven by the tier's scripted fake Messages API, so nothing leaves
the machine. Each run is one turn that ends at once: what differs is coord's
SessionStart, Stop (wake, which must leave at once in an unattended run) and
SessionEnd hooks, and the MCP server's start. Skipped, saying so, when the
host is not installed.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from hosts.fake_anthropic import FakeAnthropic, Say
from hosts.world import CLAUDE, World


def _claude_p(world: World, cwd: Path) -> float:
    with FakeAnthropic([Say("ok")]) as api:
        started = time.perf_counter()
        subprocess.run(
            [str(CLAUDE), "-p", "hi", "--output-format", "json"],
            cwd=cwd,
            env={**world.env, "ANTHROPIC_BASE_URL": api.url},
            capture_output=True,
            timeout=300,
            check=True,
        )
        return time.perf_counter() - started


def measure_hosts(runs: int = 5) -> dict[str, float]:
    if not CLAUDE.exists():
        print("bench: the host tier is not installed (make test-hosts); host rows skipped")
        return {}
    world = World()
    try:
        world.trust_claude_folder(world.repo)
        plain = Path(tempfile.mkdtemp(prefix="plain", dir=world.root))
        subprocess.run(["git", "init", "-q", str(plain)], check=True)
        world.trust_claude_folder(plain)
        # Setup writes user-scope files: the plain run gets a HOME of its own without them.
        bare = World()
        bare.trust_claude_folder(plain)
        assert world.coord("setup", "claude").returncode == 0
        with_coord, without = [], []
        for _ in range(runs):  # alternated, so drift cancels
            without.append(_claude_p(bare, plain))
            with_coord.append(_claude_p(world, world.repo))
        bare.close()
    finally:
        world.close()
    shutil.rmtree(plain, ignore_errors=True)
    return {
        "host_claude_p_plain_s": statistics.median(without),
        "host_claude_p_coord_s": statistics.median(with_coord),
        "host_claude_p_ratio": statistics.median(
            w / o for w, o in zip(with_coord, without, strict=True)
        ),
    }


if __name__ == "__main__":
    print(measure_hosts())

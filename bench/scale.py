"""`make bench-scale`: does anything an agent or the person waits for grow with the board?

    .venv/bin/python -m bench.scale [--sizes 1000,10000,100000] [--rounds 3]

Boards of each size in the shape a team's board takes over months (bench/scale_board.py:
95% done with their events kept, 5% open, four projects, 50 agents) are built once and
cached in `--state-dir` (default `$XDG_CACHE_HOME/coordd-bench-scale`), keyed by size,
the store's schema version and the script's version; a board older than 20 hours is
built again (its open claims hold day-long leases). Sizes up to 1,000 are built through
the wire; larger ones by the fast path (direct inserts of the same rows). 1,000,000
tasks is opt-in (`--sizes ...,1000000`): minutes to build, about 2.4 GB.

Each round copies every size's cached board to a scratch file, starts `coordd serve` on
it, times the surfaces (bench/scale_surfaces.py), then kills it with SIGKILL and times
its restart; the sizes alternate round by round (in reverse order every other round),
so a load that comes and goes touches them all. Each surface is reported as its median
at each size and as a ratio to the smallest size's (the baseline, 1,000 tasks by
default), measured in the same rounds. The table goes into BENCHMARKS.md between its
markers (bench/scale_report.py), with the machine's load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench import scale_board as boards
from bench import scale_report as report
from bench import scale_surfaces as surfaces
from bench.hooks import payloads
from coordd.store.schema import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[1]
#: Bump when the script (scale_board.plan) changes: cached boards are then rebuilt.
SCRIPT_VERSION = 1
CACHE_MAX_AGE_S = 20 * 3600.0
WIRE_UP_TO = 1000


def state_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "coordd-bench-scale"


def world(state: Path) -> tuple[Path, dict[str, str]]:
    """The repository the CLI runs in (its path is the main project's name) and the
    environment a user's shell and a host's hooks give it; made once per state dir."""
    repo = state / "world" / "repo"
    if not (repo / ".git").exists():
        (repo / "src").mkdir(parents=True, exist_ok=True)
        (repo / "src" / "a.py").write_text("a = 1\n")
        subprocess.run(["git", "-C", str(repo), "init", "-q"], check=True)
        subprocess.run(["git", "-C", str(repo), "add", "src/a.py"], check=True)
    home = state / "world" / "home"
    home.mkdir(parents=True, exist_ok=True)
    drop = ("COORD", "CLAUDE", "GIT_", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(
        HOME=str(home),
        XDG_STATE_HOME=str(state / "world" / "state"),
        XDG_RUNTIME_DIR=str(state / "world" / "run"),
        COORDD_SOCKET=str(state / "run" / "coordd.sock"),
        COORD_NO_AUTOSTART="1",
        CLAUDE_CODE_SESSION_ATTENDED="1",
    )
    (state / "run").mkdir(parents=True, exist_ok=True)
    return repo.resolve(), env


def cached_board(state: Path, size: int, project: str, way: str) -> tuple[Path, str]:
    """The pristine board of `size` tasks, built now if none fresh is cached; and how
    it was built ("wire" or "fast")."""
    if way == "auto":
        way = "wire" if size <= WIRE_UP_TO else "fast"
    db = state / "boards" / f"s{SCHEMA_VERSION}-p{SCRIPT_VERSION}-{way}-{size}.db"
    if db.exists() and time.time() - db.stat().st_mtime < CACHE_MAX_AGE_S:
        return db, way
    db.parent.mkdir(parents=True, exist_ok=True)
    for stale in db.parent.glob(f"*-{size}.db*"):
        stale.unlink()
    building = db.with_suffix(".building")
    for leftover in building.parent.glob(building.name + "*"):
        leftover.unlink()
    started = time.perf_counter()
    socket = state / "run" / "build.sock"
    log = state / "run" / "build.log"
    if way == "fast":
        boards.build_fast(building, size, project)
        daemon, _ = surfaces.start_daemon(building, socket, log)
    else:
        daemon, _ = surfaces.start_daemon(building, socket, log)
        boards.build_wire(socket, size, project)
    boards.add_messages(socket, project)
    surfaces.stop(daemon)  # a clean stop: checkpointed, no -wal left
    building.rename(db)
    for leftover in building.parent.glob(building.name + "*"):
        leftover.unlink()  # the daemon's lock file
    sys.stderr.write(f"built {size:,} tasks ({way}) in {time.perf_counter() - started:.0f} s\n")
    return db, way


def one_round(
    pristine: Path, state: Path, repo: Path, env: dict[str, str], opts: argparse.Namespace
) -> dict[str, list[float]]:
    """Every surface once (or `opts.samples` times) on a fresh copy of `pristine`."""
    run = state / "run"
    db = run / "board.db"
    for old in run.glob("board.db*"):
        old.unlink()
    shutil.copyfile(pristine, db)
    # A new tab for each board: the session-start hook records the board it found for
    # its host (this process), and `coord` then refuses a different one as a split.
    for tabs in (state / "world").glob("**/coordd/tabs"):
        shutil.rmtree(tabs)
    socket = Path(env["COORDD_SOCKET"])
    out: dict[str, list[float]] = {}

    def add(key: str, value: float | None) -> None:
        # A run stopped at its limit counts as the limit: a lower bound, said in the table.
        out.setdefault(key, []).append(opts.limit if value is None else value)
        if value is None:
            out.setdefault(f"{key}_stopped", []).append(1.0)

    daemon, _ = surfaces.start_daemon(db, socket, run / "daemon.log")
    try:
        surfaces.run_timed([surfaces.COORD, "ls"], env, repo)  # warm: bytecode, pages
        out["claim_next"] = surfaces.claim_next_p50(socket, str(repo), opts.claims)
        # Writes arrive at random moments over about two `claim_next` round trips.
        spread = min(0.5, 2 * statistics.median(out["claim_next"]))
        writes, claims = surfaces.write_beside_claims(socket, str(repo), opts.claims, spread)
        out["write_beside"], out["loop_claims"] = writes, [float(claims)]
        command = surfaces.session_start_command(repo, env)
        start = payloads(repo)["session-start"]
        for _ in range(opts.samples):
            add("ls", surfaces.run_timed([surfaces.COORD, "ls"], env, repo))
            add("session_start", surfaces.run_timed(["sh", "-c", command], env, repo, start))
        add("top", surfaces.top_first_paint(env, repo, opts.limit))
        web = surfaces.Web(env, repo)
        try:
            web.get()  # signs in (the one-time code), warms
            for _ in range(opts.samples):
                add("web", web.get())
        finally:
            web.stop()
        for fmt in ("md", "jsonl"):
            add(f"export_{fmt}", surfaces.export_timed(env, repo, fmt, run / "export", opts.limit))
        surfaces.kill_hard(daemon)
        daemon, restart = surfaces.start_daemon(db, socket, run / "daemon.log")
        add("restart", restart)
    finally:
        surfaces.stop(daemon)
    return out


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--claims", type=int, default=20, help="claim_next and writes a round")
    parser.add_argument("--samples", type=int, default=3, help="ls, hook, web runs a round")
    parser.add_argument("--limit", type=float, default=300.0, help="seconds before a run stops")
    parser.add_argument("--build", choices=("auto", "wire", "fast"), default="auto")
    parser.add_argument("--state-dir", type=Path, default=None)
    parser.add_argument("--output", type=Path, default=ROOT / "BENCHMARKS.md")
    parser.add_argument("--note", default="", help="a sentence for the report (the code run)")
    opts = parser.parse_args(argv)
    sizes = sorted(int(s.replace("_", "")) for s in opts.sizes.split(","))
    state: Path = (opts.state_dir or state_dir()).resolve()
    state.mkdir(parents=True, exist_ok=True)
    repo, env = world(state)
    load_before = load_average()
    built = {size: cached_board(state, size, str(repo), opts.build) for size in sizes}
    samples: dict[int, dict[str, list[float]]] = {size: {} for size in sizes}
    started = time.perf_counter()
    try:
        for n in range(opts.rounds):
            for size in sizes if n % 2 == 0 else reversed(sizes):
                sys.stderr.write(f"round {n + 1}/{opts.rounds}: {size:,} tasks\n")
                measured = one_round(built[size][0], state, repo, env, opts)
                for key, values in measured.items():
                    samples[size].setdefault(key, []).extend(values)
                sys.stderr.write(
                    "  "
                    + ", ".join(f"{k} {statistics.median(v):.3f}" for k, v in measured.items())
                    + "\n"
                )
    finally:
        # The quick path's warm server (started by the first hook) exits once its
        # socket is gone.
        for quick in (state / "run").glob("quick-*.sock"):
            quick.unlink()
        for scratch in [*(state / "run").glob("board.db*"), state / "run" / "export"]:
            # The round's copy and export (3.5 and 1.5 GB at 1M); the cached boards stay.
            scratch.unlink(missing_ok=True)
    figures = {
        size: {key: statistics.median(values) for key, values in measured.items()}
        for size, measured in samples.items()
    }
    for size in sizes:
        figures[size]["db_bytes"] = float(built[size][0].stat().st_size)
    run = report.Run(
        sizes=sizes,
        figures=figures,
        stopped={
            s: {
                k.removesuffix("_stopped"): len(v)
                for k, v in samples[s].items()
                if k.endswith("_stopped")
            }
            for s in sizes
        },
        built={size: way for size, (_, way) in built.items()},
        rounds=opts.rounds,
        load_before=load_before,
        load_after=load_average(),
        minutes=(time.perf_counter() - started) / 60,
        limit_s=opts.limit,
        note=opts.note,
    )
    text = report.render(run)
    report.write_section(opts.output, text)
    (state / "last-run.json").write_text(json.dumps({str(k): v for k, v in samples.items()}))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

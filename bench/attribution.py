"""What reports of old model calls cost every other write: `python -m bench.attribution`.

A board whose event log holds `--events` events (a long-lived board: the fast path
below), `--reporters` clients looping `usage.report` with entries older than every
event (a hook's first read of a long transcript: the attribution walk goes as far
back as it may), and one client timing `task.post`, the write every agent makes.
The figure is the post's p50 with the reporters running over its p50 alone, in the
same run; `--code DIR` runs the daemon from another checkout's `src/` and `clients/`
(an older commit, `git worktree add`), so a change is measured against what it
replaced on the same board and machine.

The fast path writes the events straight into the SQLite file before the daemon
opens it: `file.edited` rows as the daemon stores them (the walk reads every event
in its range of seqs, whatever its type, so their kind does not change its cost).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from coordd_client import Client
from coordd_client.autostart import wait_until_ready

PROJECT = "/bench"


def build_board(db: Path, events: int, code: Path | None) -> None:
    """A migrated board (a daemon started and stopped on it), then `events` rows."""
    proc = start_daemon(db, db.with_suffix(".sock"), code)
    stop(proc)
    conn = sqlite3.connect(db)
    with conn:
        rows = (
            (
                "file.edited",
                PROJECT,
                f"2026-12-01T00:{n // 60000 % 60:02d}:{n // 1000 % 60:02d}.{n % 1000:03d}000Z",
                f'{{"type":"file.edited","path":"f{n % 997}.py","agent":"noise"}}',
            )
            for n in range(events)
        )
        conn.executemany("INSERT INTO events (type, project, at, data) VALUES (?, ?, ?, ?)", rows)
    conn.close()


def start_daemon(db: Path, socket: Path, code: Path | None) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = f"{code / 'src'}:{code / 'clients/python/src'}"
    log = open(db.with_suffix(".log"), "ab")  # noqa: SIM115 (the daemon keeps it)
    proc = subprocess.Popen(
        [sys.executable, "-m", "coordd", "serve", "--db", str(db), "--socket", str(socket)],
        stdout=log,
        stderr=log,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    log.close()
    wait_until_ready(socket, timeout_s=300)
    return proc


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    proc.wait(120)


def post_p50(socket: Path, count: int) -> float:
    with Client(socket, agent="prober", project=PROJECT) as client:
        times = []
        for n in range(count):
            start = time.perf_counter()
            client.post(f"probe {n}")
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def report_forever(socket: Path, name: str, stop_event: threading.Event, done: list[int]) -> None:
    with Client(socket, agent=name, project=PROJECT) as client:
        n = 0
        while not stop_event.is_set():
            entry = {"id": f"{name}-{n}", "at": "2026-11-01T00:00:00Z", "model": "m", "input": 1}
            client.report_usage("claude", [entry])
            n += 1
    done.append(n)


def measure(events: int, reporters: int, posts: int, code: Path | None) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="coordd-attr-") as tmp:
        db = Path(tmp) / "board.db"
        build_board(db, events, code)
        socket = Path(tmp) / "s.sock"
        proc = start_daemon(db, socket, code)
        try:
            alone = post_p50(socket, posts)
            halt = threading.Event()
            done: list[int] = []
            threads = [
                threading.Thread(target=report_forever, args=(socket, f"r{i}", halt, done))
                for i in range(reporters)
            ]
            for thread in threads:
                thread.start()
            started = time.perf_counter()
            loaded = post_p50(socket, posts)
            halt.set()
            for thread in threads:
                thread.join()
            elapsed = time.perf_counter() - started
        finally:
            stop(proc)
    return {
        "post_p50_alone_ms": alone * 1000,
        "post_p50_with_reporters_ms": loaded * 1000,
        "ratio": loaded / alone,
        "reports_per_s": sum(done) / elapsed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--reporters", type=int, default=2)
    parser.add_argument("--posts", type=int, default=200)
    parser.add_argument("--code", type=Path, action="append", default=[])
    args = parser.parse_args()
    for code in [None, *args.code]:
        figures = measure(args.events, args.reporters, args.posts, code)
        label = "this checkout" if code is None else str(code)
        shown = ", ".join(f"{k} {v:.2f}" for k, v in figures.items())
        print(f"{label}: {args.events} events, {args.reporters} reporters: {shown}", flush=True)
    print(f"load {os.getloadavg()}")


if __name__ == "__main__":
    main()

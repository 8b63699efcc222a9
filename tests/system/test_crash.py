"""kill -9 at random moments under concurrent writers; then audit the history against the file.

Every acknowledged post, claim, completion and reservation must be in the
database, and no reservation request granted in part; no
task may have two overlapping holders; fences only rise; seqs stay gap-free;
`PRAGMA integrity_check` says ok; readers never see -32603. The quick tier
runs in `make test`; `make soak` runs many more rounds.
"""

from __future__ import annotations

import itertools
import json
import random
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from racing import WORKERS

from coordd_wire.patterns import overlap, parse
from support import DaemonProcess


def start_workers(
    socket_path: Path, histories: list[Path], seconds: float
) -> list[subprocess.Popen[bytes]]:
    """One `crash_worker.py` per history file, the last a reader, each for `seconds`;
    each writes what it was told, op by op, for `audit`."""
    reader = len(histories) - 1  # the last history is the reader's
    return [
        subprocess.Popen(
            [
                sys.executable,
                str(WORKERS / "crash_worker.py"),
                str(socket_path),
                f"agent{n}",
                str(seconds),
                str(path),
            ]
            + (["reader"] if n == reader else [])
        )
        for n, path in enumerate(histories)
    ]


def run_rounds(workdir: Path, rounds: int, writers: int = 3) -> dict[str, int]:
    daemon = DaemonProcess(workdir, args=("--log-level", "warning")).start()
    seconds = rounds * 1.0 + 2.0
    histories = [workdir / f"history-{n}.jsonl" for n in range(writers + 1)]
    workers = start_workers(daemon.socket_path, histories, seconds)
    rng = random.Random(rounds)
    try:
        for _ in range(rounds):
            time.sleep(rng.uniform(0.3, 0.9))
            daemon.kill()  # SIGKILL: no drain, no checkpoint
            daemon.start()
        for worker in workers:
            assert worker.wait(seconds + 60) == 0
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
        daemon.kill()  # the last stop is a crash too
    return audit(daemon.db_path, histories)


def audit(db_path: Path, histories: list[Path]) -> dict[str, int]:
    entries = [json.loads(line) for path in histories for line in path.read_text().splitlines()]
    conn = sqlite3.connect(db_path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        by_key = dict(
            conn.execute("SELECT idempotency_key, id FROM tasks WHERE idempotency_key IS NOT NULL")
        )
        tasks = {
            row[0]: row for row in conn.execute("SELECT id, state, claimed_by, fence FROM tasks")
        }
        claimed: dict[int, list[tuple[int, str]]] = defaultdict(list)
        for task_id, fence, agent in conn.execute(
            "SELECT json_extract(data, '$.task_id'), json_extract(data, '$.task.fence'),"
            " json_extract(data, '$.agent') FROM events WHERE type = 'task.claimed' ORDER BY seq"
        ):
            claimed[task_id].append((fence, agent))
        count, low, high = conn.execute(
            "SELECT count(*), min(seq), max(seq) FROM events"
        ).fetchone()
        reservations = conn.execute(
            "SELECT id, agent, pattern FROM reservations WHERE project = '/crash'"
        ).fetchall()
    finally:
        conn.close()
    assert count == high - low + 1, "event seqs have a gap"
    for task_id, claims in claimed.items():
        fences = [fence for fence, _ in claims]
        assert fences == list(range(1, len(fences) + 1)), (
            f"task {task_id}: fences {fences} do not rise by one"
        )
        assert tasks[task_id][3] == fences[-1]
    outcomes: defaultdict[str, int] = defaultdict(int)
    for entry in entries:
        outcomes[f"{entry['op']}:{entry['outcome']}"] += 1
        if entry["outcome"] == "fail":
            assert entry["code"] != -32603, entry
        if entry["outcome"] != "ok":
            continue
        if entry["op"] == "post":
            assert by_key[entry["key"]] == entry["id"], entry  # acknowledged, exactly once
        elif entry["op"] == "claim" and entry["won"]:
            assert (entry["fence"], entry["holder"]) in claimed[entry["id"]], entry
        elif entry["op"] == "complete":
            _, state, _holder, fence = tasks[entry["id"]]
            assert (state, fence) == ("done", entry["fence"]), entry
    # Each fence of a task was given to exactly one holder.
    for task_id, claims in claimed.items():
        assert len({fence for fence, _ in claims}) == len(claims), task_id
    assert outcomes["post:ok"] > 0 and outcomes["claim:ok"] > 0 and outcomes["list:ok"] > 0
    audit_reservations(reservations, entries)
    return dict(outcomes)


def audit_reservations(rows: list[tuple[int, str, str]], entries: list[dict[str, Any]]) -> None:
    """Every acknowledged acquire is there unless released since; none is there in part;
    no two agents hold overlapping exclusive patterns."""
    by_pattern = {pattern: reservation_id for reservation_id, _, pattern in rows}
    released_later: set[str] = set()
    for entry in reversed(entries):  # each worker's history is in order; patterns are its own
        own = [p for p in entry.get("patterns") or [] if not p.startswith("hot/")]
        if entry["op"] == "unreserve" and entry["outcome"] != "fail":
            released_later.update(own)
        elif entry["op"] == "reserve" and entry["outcome"] == "ok" and own[0] not in released_later:
            assert [by_pattern.get(p) for p in own] == entry["ids"][: len(own)], entry
        if entry["op"] == "reserve" and own:
            assert (own[0] in by_pattern) == (own[1] in by_pattern), ("half-granted", entry)
    for (_, agent_x, x), (_, agent_y, y) in itertools.combinations(rows, 2):
        if agent_x != agent_y:
            assert not overlap(parse(x), parse(y)), (x, y)


def test_kill_9_under_concurrent_writers_loses_nothing_acknowledged(workdir: Path) -> None:
    outcomes = run_rounds(workdir, rounds=5)
    print("audited:", outcomes)


@pytest.mark.soak
@pytest.mark.timeout(1800)
def test_soak_many_kill_9_rounds(workdir: Path) -> None:
    outcomes = run_rounds(workdir, rounds=60, writers=4)
    print("audited:", outcomes)

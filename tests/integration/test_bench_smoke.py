"""The bench's in-process diagnostics still run against today's store (tiny counts).

`make bench` is not part of the suite (it takes minutes and its figures are
not asserted), so without this a refactor of the store can break it unseen.
"""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import msgspec
from bench.baselines import sqlite_commit_per_claim
from bench.diagnostics import (
    coordd_claim_transaction_latencies,
    writer_claim_cost_with_and_without_gil_contention,
)
from bench.floor_anatomy import STATEMENTS, statement_costs
from bench.floor_rows import prepare_board
from bench.harness import Daemon, floor_server

from coordd_client import Client, methods


def test_the_bench_diagnostics_run(tmp_path: Path) -> None:
    latencies = coordd_claim_transaction_latencies(tmp_path / "own.db", 5)
    assert len(latencies) == 5 and all(t > 0 for t in latencies)
    alone, contended = writer_claim_cost_with_and_without_gil_contention(
        tmp_path / "gil.db", count=16
    )
    # CPU time this short may round to 0; what matters is that it ran to the end.
    assert math.isnan(alone) or (alone >= 0 and contended >= 0)
    assert len(sqlite_commit_per_claim(tmp_path / "base.db", 5)) == 5


def test_the_floor_answers_the_bench_workers_as_coordd_does(workdir: Path) -> None:
    """`bench/floor.py` speaks enough of the protocol for the same client processes."""
    socket, db, log = workdir / "floor.sock", workdir / "floor.db", workdir / "floor.log"
    with floor_server("bench.floor", socket, str(db), "3", log=log), Client(socket) as client:
        assert client.ping().pong
        assert client.server_info().protocol == 1
        first = client.claim(2, "a")
        assert first.won and (first.task.claimed_by, first.task.fence) == ("a", 1)
        second = client.claim(2, "b")
        assert not second.won and second.task.claimed_by == "a"


class Won(msgspec.Struct):
    won: bool


def test_the_leanest_floor_answers_only_whether_the_claim_won(workdir: Path) -> None:
    """`bench/floor_lean.py` runs the bare UPDATE with no RETURNING: one winner, and an
    answer that holds `won` and nothing else (`bench.worker`'s claim-won mode reads it)."""
    socket, db, log = workdir / "lean.sock", workdir / "lean.db", workdir / "lean.log"
    with floor_server("bench.floor_lean", socket, str(db), "3", log=log), Client(socket) as client:
        assert client.ping().pong
        first = client.send(methods.claim(2, "a").as_type(dict))
        assert first == {"won": True}
        assert client.send(methods.claim(2, "b").as_type(Won)) == Won(won=False)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT claimed_by, fence FROM tasks WHERE id = 2").fetchone() == (
            "a",
            1,
        )


def test_the_rows_floor_writes_what_coordd_reads_back(workdir: Path) -> None:
    """`bench/floor_rows.py` runs coordd's claim on coordd's board: one winner, the claim's
    request key in the row, and an event coordd finds in the task's history, stored as
    coordd stores its own claim's event."""
    db, first = prepare_board(workdir, "rows", 3)
    socket = workdir / "rows-floor.sock"
    log = workdir / "rows.log"
    with floor_server("bench.floor_rows", socket, str(db), log=log), Client(socket) as client:
        won = client.claim(first + 1, "a")
        assert won.won and (won.task.claimed_by, won.task.fence) == ("a", 1)
        lost = client.claim(first + 1, "b")
        assert not lost.won and lost.task.claimed_by == "a"
    daemon = Daemon(workdir, name="rows")
    try:
        with daemon.client() as client:
            history = client.events_since(after_seq=0, task_id=first + 1).events
            assert [(e.type, e.agent) for e in history] == [
                ("task.posted", None),
                ("task.claimed", "a"),
            ]
            assert history[1].task is not None and history[1].task.fence == 1
            assert client.get(first + 1).task.claimed_by == "a"
            assert client.claim(first + 2, "c").won  # coordd's own claim, to compare with
    finally:
        daemon.stop()
    with sqlite3.connect(db) as conn:
        keys = conn.execute("SELECT claim_key FROM tasks WHERE id IN (?, ?) ORDER BY id",
                            (first + 1, first + 2)).fetchall()  # fmt: skip
        stored = conn.execute("SELECT data FROM events WHERE type = 'task.claimed' ORDER BY seq")
        floors, coordds = (json.loads(data) for (data,) in stored.fetchall())
    assert all(key is not None for (key,) in keys)  # the clients sent one to each
    assert list(floors) == list(coordds)  # the same members in the same order
    assert floors["task"].keys() == coordds["task"].keys()


def test_the_claim_statement_timings_run_on_todays_schema() -> None:
    """`floor_anatomy.statement_costs` cuts the claim statements apart by their text (a cut
    that no longer applies fails the module's import) and drops the claim's indexes by
    name: a schema change that breaks either shows here."""
    costs = statement_costs(1, 2)
    assert list(costs) == list(STATEMENTS)
    assert all(spent >= 0 for spent in costs.values())


def test_the_as_installed_payloads_name_the_edit_and_the_table_holds_every_call(
    tmp_path: Path,
) -> None:
    """`bench/as_installed.py`'s stdin is what the hooks read as their host's (the edit's
    path found in Claude Code's and Codex's shapes), and its table has a row per call."""
    from bench.as_installed import HOOKS, labels, over_target, payload, render

    from coordd_apps.hooks.payload import read

    repo = tmp_path / "repo"
    for what in HOOKS:
        host, event = what.split()
        text = payload(what, repo)
        if host == "git":
            assert text == ""
            continue
        given = read(text, host, {}, agent="a", project=str(repo))  # type: ignore[arg-type]
        assert given.raw["cwd"] == str(repo)
        if event in ("pre-edit", "post-tool"):
            named = [p.removeprefix(f"{repo}/") for p in given.paths]  # Codex: relative
            assert named == ["src/a.py"], (what, given.paths)
    figures = {f"agent_1000_{w.replace(' ', '_')}_ratio": 1.5 for w in labels()}
    figures["agent_1000_claude_deliver_ratio"] = 2.5
    assert over_target(figures) == {"agent_1000_claude_deliver_ratio": 2.5}
    table = render(figures, sizes=(1000,))
    assert sum(line.startswith("| ") for line in table) == len(labels()) + 2  # head, rule

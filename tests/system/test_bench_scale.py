"""`make bench-scale` cannot rot unseen: its fast path writes the rows the wire writes, a
daemon serves the board it builds, and the whole benchmark runs at a tiny size.

The benchmark takes minutes and its figures are not asserted; these check that it runs,
against today's daemon and CLI, and that what it builds is a board like any other.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from bench import scale, scale_board, scale_report, scale_surfaces

from coordd_client import Client

PROJECT = "/scale/main"


def build(workdir: Path, way: str, size: int) -> Path:
    db, socket = workdir / f"{way}.db", workdir / f"{way}.sock"
    if way == "fast":
        scale_board.build_fast(db, size, PROJECT)
        daemon, _ = scale_surfaces.start_daemon(db, socket, workdir / f"{way}.log")
    else:
        daemon, _ = scale_surfaces.start_daemon(db, socket, workdir / f"{way}.log")
        scale_board.build_wire(socket, size, PROJECT)
    try:
        scale_board.add_messages(socket, PROJECT)
    finally:
        scale_surfaces.stop(daemon)
    return db


@pytest.mark.timeout(300)
def test_the_fast_path_writes_the_rows_the_wire_writes(workdir: Path) -> None:
    wire = scale_board.compare_rows(build(workdir, "wire", 120))
    fast = scale_board.compare_rows(build(workdir, "fast", 120))
    assert wire["tasks"] and len(wire["events"]) > 2 * len(wire["tasks"])
    for table, rows in wire.items():
        assert fast[table] == rows, table
    states = [row[5] for row in wire["tasks"]]  # (id, project, kind, title, body, state, ...)
    assert states.count("done") == 114 and states.count("claimed") == 3


@pytest.mark.timeout(300)
def test_a_daemon_serves_the_fast_board(workdir: Path) -> None:
    """Claims, completions and reads on the fast board: the open claims are live (another
    agent loses them), claim_next takes the most urgent pending task of the project, and
    `coord ls` lists the open work."""
    db = workdir / "board.db"
    scale_board.build_fast(db, 200, PROJECT)
    socket = workdir / "board.sock"
    daemon, _ = scale_surfaces.start_daemon(db, socket, workdir / "board.log")
    specs = [scale_board.spec(n, PROJECT) for n in range(200)]
    pending = [s for s in specs if s.fate == "pending" and s.project == PROJECT]
    best = min(pending, key=lambda s: (-s.priority, s.n))
    held = next(s for s in specs if s.fate == "claimed")
    try:
        with Client(socket, agent="newcomer", project=PROJECT) as client:
            lost = client.claim(held.n + 1)
            assert not lost.won and lost.task.claimed_by == held.worker
            got = client.claim_next().task
            assert got is not None and got.id == best.n + 1 and got.title == best.title
            done = client.complete(got.id, result="ok").task
            assert done.state == "done" and done.fence == 1
            history = client.events_since(after_seq=0, task_id=got.id).events
            assert [e.type for e in history] == ["task.posted", "task.claimed", "task.completed"]
        listed = subprocess.run(
            [scale_surfaces.COORD, "--socket", str(socket), "--project", PROJECT, "ls"],
            capture_output=True, text=True, check=True, timeout=120,
        )  # fmt: skip
        open_titles = [s.title for s in specs if s.fate != "done" and s.project == PROJECT]
        assert best.title not in listed.stdout  # done now
        assert all(t in listed.stdout for t in open_titles if t != best.title), listed.stdout
    finally:
        scale_surfaces.stop(daemon)


@pytest.mark.timeout(600)
def test_the_benchmark_runs_end_to_end(workdir: Path) -> None:
    """Two tiny sizes, one round, through every surface; the section lands between its
    markers and leaves the rest of the file alone."""
    output = workdir / "BENCHMARKS.md"
    output.write_text("# kept\n")
    state = str(workdir / "state")
    args = ["--sizes", "100,200", "--rounds", "1", "--claims", "2", "--samples", "1",
            "--build", "fast", "--state-dir", state, "--output", str(output)]  # fmt: skip
    assert scale.main(args) == 0
    text = output.read_text()
    assert text.startswith("# kept\n")
    section = text.split(scale_report.BEGIN, 1)[1].split(scale_report.END, 1)[0]
    for _, what, _ in scale_report.SURFACES:
        row = next(line for line in section.splitlines() if line.startswith(f"| {what} |"))
        assert "n/a" not in row and "(" in row.rsplit("|", 2)[1], row  # 200's has a ratio
    assert "| `coord top` first paint" in section and "stopped" not in section
    # Run again: the cached boards are used, the section replaced, not added.
    assert scale.main(args) == 0
    assert output.read_text().count(scale_report.BEGIN) == 1


def test_make_bench_keeps_the_section(tmp_path: Path) -> None:
    path = tmp_path / "BENCHMARKS.md"
    section = f"{scale_report.BEGIN}\n| growth |\n{scale_report.END}\n"
    path.write_text(f"# old\n\n{section}")
    kept = scale_report.carry_over(path, "# new\n")
    assert kept == f"# new\n\n{section}"
    assert scale_report.carry_over(tmp_path / "none.md", "# new\n") == "# new\n"

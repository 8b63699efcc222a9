"""The everyday reads ask the daemon for what they show (docs/PROTOCOL-1.2.md section 6c):
on a board with many finished tasks and more open ones than a page holds, `coord ls`,
`coord prime` and the web board read a bounded amount, counted by the daemon itself
(`server.info.readers.admitted`: every read a client's connection had served), and
still say what they always said; `coord top` paints its first rows and every state's
count before it reads the whole board.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from coordd_apps.tui.follow import FIRST_ROWS, FIRST_STATES, Follower
from coordd_client import Client, methods
from coordd_client.gather import gather, value
from coordd_client.paging import TASK_PAGE
from coordd_wire.wire import STATES
from support import DaemonProcess, coord
from web_server import http, start_web

#: More open tasks than four pages of `task.list` hold: paging them all takes five reads.
OPEN = 4 * TASK_PAGE + 300
DONE = 600


@pytest.fixture
def repo(workdir: Path) -> Path:
    path = workdir / "repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


@pytest.fixture
def board(daemon: DaemonProcess, repo: Path) -> Iterator[Client]:
    """`DONE` finished tasks, then `OPEN` pending ones of priorities 0..4 (a few claimed),
    posted in pipelined batches."""
    with Client(daemon.socket_path, agent="poster", project=str(repo)) as client:
        for start in range(0, DONE + OPEN, 200):
            batch = []
            for n in range(start, min(start + 200, DONE + OPEN)):
                done = n < DONE
                batch.append(methods.post(f"t{n}", priority=n % 5, state="done" if done else None))
            for answer in gather(client, batch):
                value(answer)
        for n in range(3):
            assert client.claim_next(agent=f"worker-{n}").task is not None
        yield client


def reads_of(
    client: Client, command: tuple[str, ...], daemon: DaemonProcess, repo: Path
) -> tuple[int, str]:
    """The reads the daemon served while `coord COMMAND` ran, and what it printed."""
    before = client.server_info().readers
    result = coord(*command, socket=daemon.socket_path, cwd=repo, env={"COORD_AGENT": "me"})
    assert result.returncode == 0, result.stderr
    after = client.server_info().readers
    assert before is not None and after is not None
    return after.admitted - before.admitted - 1, result.stdout  # less our own server.info


def test_ls_reads_the_rows_it_shows_and_counts_the_rest(
    board: Client, daemon: DaemonProcess, repo: Path
) -> None:
    reads, out = reads_of(board, ("ls", "--limit", "5"), daemon, repo)
    # One list, with its counts: paging every open task took five lists.
    assert reads == 1, reads
    rows = [line.split()[0] for line in out.splitlines()[1:6]]
    expected = sorted(
        (t for t in board.list_tasks(state=["pending", "claimed"], limit=1000).tasks),
        key=lambda t: (-t.priority, t.id),
    )  # the first page is enough: the first ids of priority 4 are in it
    assert rows == [str(t.id) for t in expected[:5]], out
    assert f"({OPEN - 5} more: raise --limit)" in out


def test_prime_reads_what_it_shows_and_counts_the_rest(
    board: Client, daemon: DaemonProcess, repo: Path
) -> None:
    reads, out = reads_of(board, ("prime",), daemon, repo)
    # Four task lists and the board's other reads (events, agents, reservations, edits,
    # server.info): nine, however many open tasks; paging them all took twelve here.
    assert reads <= 9, reads
    assert f"Ready to claim ({OPEN - 3}, most urgent first):" in out, out
    assert f"... {OPEN - 3 - 8} more (coord ls)" in out


def test_the_web_board_reads_the_rows_it_shows_and_counts_the_rest(
    board: Client, daemon: DaemonProcess, repo: Path
) -> None:
    web = start_web(daemon.socket_path, str(repo), "--rows", "50")
    try:
        cookie = http(web.url).headers["set-cookie"].split(";", 1)[0]
        before = board.server_info().readers
        page = http(web.base + "/", headers={"Cookie": cookie})
        after = board.server_info().readers
    finally:
        web.stop()
    assert page.status == 200
    assert before is not None and after is not None
    # server.info, the newest rows with the counts, the human's gates, the costs' reads:
    # five, however many open tasks; paging them by id took nine here.
    assert after.admitted - before.admitted - 1 <= 5
    newest = sorted(t.id for t in board.list_tasks(state="pending", order="newest", limit=50).tasks)
    assert f'id="t{newest[0]}"' in page.body and f'id="t{newest[0] - 1}"' not in page.body
    assert f"50 tasks shown; {OPEN - 50:,} older ones too" in page.body


def test_top_paints_its_first_rows_before_reading_the_whole_board(
    board: Client, daemon: DaemonProcess, repo: Path
) -> None:
    follower = Follower(daemon.socket_path, str(repo))
    seq = follower._load()
    assert follower.first is not None and follower.loaded is not None
    rows, counts, first_seq = follower.first
    assert first_seq == seq
    every, _ = follower.loaded
    open_ids = sorted(t.id for t in every if t.state in FIRST_STATES)
    assert [t.id for t in rows] == open_ids[:FIRST_ROWS]
    assert counts == {state: sum(1 for t in every if t.state == state) for state in STATES}
    assert counts["done"] == DONE and counts["pending"] == OPEN - 3

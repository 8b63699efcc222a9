"""The kept task counts (`store/task_counts_schema.py`): whatever moves a task, on both
stores, the counters `server.info` and the project-only counts of section 6c answer
from equal the tasks counted one by one."""

from __future__ import annotations

import pytest

from coordd.clock import ManualClock
from coordd.store import reads
from store.board import Board

pytestmark = pytest.mark.both_backends


def _agree(board: Board) -> dict[str, int]:
    kept = board.read(reads.state_counts)
    assert kept == board.read(reads.counted_states)
    return kept


def test_every_transition_keeps_the_counts_exact(board: Board, clock: ManualClock) -> None:
    with board.seat("a", "/a") as a, board.seat("b", "/b") as b:
        ids = [a.post(f"a{n}").task.id for n in range(8)] + [b.post("b0").task.id]
        assert _agree(board) == {"pending": 9, "claimed": 0, "done": 0, "failed": 0,
                                 "cancelled": 0}  # fmt: skip
        for task_id in ids[:6]:
            assert a.claim(task_id, lease_s=5).won
        a.complete(ids[0])
        a.fail(ids[1], reason="no")
        a.fail(ids[2], reason="again", retry=True)
        a.release(ids[3])
        a.cancel(ids[4])
        b.cancel(ids[8])
        a.reopen(ids[0])
        _agree(board)
        clock.advance(10)  # ids[5]'s lease lapses: the reaper returns it to pending
        assert board.reap() >= 1
        kept = _agree(board)
        assert kept == {"pending": 6, "claimed": 0, "done": 0, "failed": 1, "cancelled": 2}
        # Section 6c's counts for one project come from the same counters.
        listed = a.list_tasks(project="/b", counts=True, limit=1).counts
        assert listed == {"pending": 0, "claimed": 0, "done": 0, "failed": 0, "cancelled": 1}

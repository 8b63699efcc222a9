"""PROTOCOL.md section 7's event log read on the store (`store/reads.py`): pages and
filters of `events.since`.

Moved from tests/system/test_events.py (issue 45 item 4), which keeps subscriptions,
waits, restarts and writers in other processes.
"""

from __future__ import annotations

import pytest

from store.board import Board

pytestmark = pytest.mark.both_backends


def test_events_since_pages_and_filters(board: Board) -> None:
    with board.seat() as client:
        a = client.post("a", project="/a").task
        client.post("b", project="/b")
        client.claim(a.id, "x")
        page = client.events_since(after_seq=0, limit=2)
        assert [e.seq for e in page.events] == [1, 2] and page.last_seq == 2
        rest = client.events_since(after_seq=page.last_seq)
        assert [e.seq for e in rest.events] == [3] and rest.last_seq == 3
        only_a = client.events_since(project="/a")
        assert [(e.seq, e.type) for e in only_a.events] == [(1, "task.posted"), (3, "task.claimed")]
        claims = client.events_since(types=["task.claimed"])
        assert [e.task_id for e in claims.events] == [a.id] and claims.last_seq == 3
        assert claims.events[0].task is not None
        assert claims.events[0].task.state == "claimed" and claims.events[0].agent == "x"
        empty = client.events_since(after_seq=3)
        assert empty.events == [] and empty.last_seq == 3

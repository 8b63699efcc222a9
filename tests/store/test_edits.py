"""docs/PROTOCOL-1.2.md section 11 on the store (`store/edits.py`, both stores): the
pre-edit verdict, reserve on first edit, stale writes and recorded edits.

Moved from tests/system/test_file_edits.py (issue 45 item 4), which keeps the feature
flag, the events on the wire, the refusals of malformed params and of worktrees
however spelled, sent raw.
"""

from __future__ import annotations

import pytest

from store.board import Board, Seat

pytestmark = pytest.mark.both_backends

PROJECT = "/repo"
MAIN, LINKED = "/repo", "/wt/b"


def tab(board: Board, agent: str) -> Seat:
    return board.seat(agent, PROJECT)


def test_first_edit_reserves_and_the_second_tab_is_denied_naming_the_first(
    board: Board,
) -> None:
    with tab(board, "a") as a, tab(board, "b") as b:
        first = a.file_guard(["src/x.py"], worktree=MAIN)
        assert first.allowed and first.task_id is None  # no claim: bound to the session
        assert [(r.pattern, r.exclusive, r.task_id) for r in first.reserved] == [
            ("src/x.py", True, None)
        ]
        second = b.file_guard(["src/x.py"], worktree=MAIN)
        assert not second.allowed and second.reserved == []
        assert [(c.path, c.reservation.agent) for c in second.conflicts] == [("src/x.py", "a")]
        again = a.file_guard(["src/x.py"], worktree=MAIN)
        assert again.allowed and again.reserved == [] and again.renewed == 1


def test_a_multi_file_edit_half_reserved_by_another_is_denied_whole(
    board: Board,
) -> None:
    with tab(board, "a") as a, tab(board, "b") as b:
        b.reserve(["src/b.py"])
        denied = a.file_guard(["src/a.py", "src/b.py", "src/c.py"], worktree=MAIN)
        assert not denied.allowed and [c.path for c in denied.conflicts] == ["src/b.py"]
        assert a.reservations(agent="a").reservations == []  # nothing reserved


def test_with_one_claim_the_reservation_is_the_tasks_and_ends_with_it(
    board: Board,
) -> None:
    with tab(board, "a") as a:
        task = a.post("edit x").task
        fence = a.claim(task.id).task.fence
        got = a.file_guard(["src/x.py"], worktree=MAIN)
        assert got.task_id == task.id and [r.task_id for r in got.reserved] == [task.id]
        a.complete(task.id, fence=fence)
        assert a.reservations(agent="a").reservations == []


def test_a_manual_reservation_is_left_as_it_is(board: Board) -> None:
    with tab(board, "a") as a:
        (mine,) = a.reserve(["src/**"], reason="mine", ttl_s=60).reservations
        got = a.file_guard(["src/x.py"], worktree=MAIN)
        assert got.allowed and got.reserved == [] and got.renewed == 0
        assert a.reservations(agent="a").reservations == [mine]


def test_advisory_mode_reserves_nothing_but_still_refuses_the_reserved(
    board: Board,
) -> None:
    with tab(board, "a") as a, tab(board, "b") as b:
        assert a.file_guard(["src/x.py"], worktree=MAIN, auto_reserve=False).reserved == []
        assert a.reservations(agent="a").reservations == []
        b.reserve(["src/y.py"])
        assert not a.file_guard(["src/y.py"], worktree=MAIN, auto_reserve=False).allowed


def test_a_stale_write_is_denied_until_the_file_is_read_again(board: Board) -> None:
    with tab(board, "a") as a, tab(board, "b") as b:
        a.record_read(["src/x.py"], ["h1"], worktree=MAIN)
        b.file_guard(["src/x.py"], worktree=MAIN, auto_reserve=False)
        b.record_edit(["src/x.py"], ["h2"], worktree=MAIN)
        stale = a.file_guard(["src/x.py"], worktree=MAIN, hashes=["h2"], auto_reserve=False)
        assert not stale.allowed
        assert [(s.path, s.agent) for s in stale.stale] == [("src/x.py", "b")]
        a.record_read(["src/x.py"], ["h2"], worktree=MAIN)
        fresh = a.file_guard(["src/x.py"], worktree=MAIN, hashes=["h2"], auto_reserve=False)
        assert fresh.allowed and fresh.stale == [] and fresh.unrecorded == []


def test_a_stale_write_needs_the_same_worktree(board: Board) -> None:
    with tab(board, "a") as a, tab(board, "b") as b:
        a.record_read(["src/x.py"], ["h1"], worktree=MAIN)
        b.record_edit(["src/x.py"], ["h2"], worktree=LINKED)  # another directory
        seen = a.file_guard(["src/x.py"], worktree=MAIN, hashes=["h1"], auto_reserve=False)
        assert seen.allowed and seen.stale == []


def test_a_change_nobody_recorded_is_warned_once(board: Board) -> None:
    with tab(board, "a") as a:
        a.record_read(["src/x.py"], ["h1"], worktree=MAIN)
        first = a.file_guard(["src/x.py"], worktree=MAIN, hashes=["h3"], auto_reserve=False)
        assert first.allowed and first.unrecorded == ["src/x.py"]
        second = a.file_guard(["src/x.py"], worktree=MAIN, hashes=["h3"], auto_reserve=False)
        assert second.allowed and second.unrecorded == []


def test_other_live_agents_edits_in_other_worktrees_are_named(board: Board) -> None:
    with tab(board, "a") as a, tab(board, "b") as b:
        b.record_edit(["src/x.py"], ["h2"], worktree=LINKED)
        b.record_edit(["src/y.py"], ["h2"], worktree=MAIN)  # the same directory: not "other"
        got = a.file_guard(["src/x.py", "src/y.py"], worktree=MAIN, auto_reserve=False)
        assert [(o.path, o.agent, o.worktree) for o in got.others] == [("src/x.py", "b", LINKED)]
        a.record_edit(["src/x.py"], ["h4"], worktree=MAIN)
        seen = a.recent_edits(agent="a").edits
        assert [(e.path, e.agent, e.worktree) for e in seen] == [("src/x.py", "b", LINKED)]
        everyone = {(e.path, e.agent) for e in a.recent_edits().edits}
        assert everyone == {("src/x.py", "a"), ("src/x.py", "b"), ("src/y.py", "b")}

"""Protocol 1.1 section 10 on the store (`store/reservations.py`): reservations and
their rules (all or nothing, shared and exclusive, renewal, check, list, release,
task-bound ones ending with the claim, heartbeat renewal).

Moved from tests/system/test_reservations.py (issue 45 item 4), which keeps what
needs a process: racing processes, waiting acquires, the wire's refusals, an upgrade
of an older database, the CLI.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from coordd_client import LeaseLost, NotFound, Reserved
from coordd_wire.wire import Task
from store.board import Board, Seat

pytestmark = pytest.mark.both_backends

PROJECT = "/repo"


def client_for(board: Board, agent: str, project: str = PROJECT) -> Seat:
    return board.seat(agent, project)


def test_acquire_is_all_or_nothing_and_names_what_is_in_the_way(board: Board) -> None:
    with client_for(board, "a") as a, client_for(board, "b") as b:
        held = a.reserve(["src/auth/**"], reason="login refactor", ttl_s=600).reservations
        assert [(r.pattern, r.exclusive, r.reason, r.ttl_s) for r in held] == [
            ("src/auth/**", True, "login refactor", 600)
        ]
        with pytest.raises(Reserved) as refused:
            b.reserve(["docs/**", "src/auth/login.py", "src/*.py"])
        assert refused.value.code == -32002 and refused.value.data["kind"] == "reserved"
        assert [(c.pattern, c.reservation.id) for c in refused.value.conflicts] == [
            ("src/auth/login.py", held[0].id)
        ]
        assert "held by a" in refused.value.message
        # How long that is, for a model that does not know the time: a 600 s TTL.
        assert re.search(r"until \S+Z \(in (9|10) min\)", refused.value.message)
        # Nothing of the refused request was granted, not even the free `docs/**`.
        assert b.reservations(agent="b").reservations == []
        # Disjoint by the protocol's rule: literal segments differ before a wildcard.
        assert [r.pattern for r in b.reserve(["src/b/*.py", "docs/**"]).reservations] == [
            "src/b/*.py",
            "docs/**",
        ]
        # Another project is another namespace.
        with client_for(board, "b", "/other") as elsewhere:
            assert elsewhere.reserve(["src/auth/**"]).reservations


def test_shared_reservations_coexist_and_exclusive_ones_do_not(board: Board) -> None:
    with client_for(board, "a") as a, client_for(board, "b") as b, client_for(board, "c") as c:
        a.reserve(["schema.sql"], exclusive=False)
        b.reserve(["schema.sql"], exclusive=False)
        with pytest.raises(Reserved) as refused:
            c.reserve(["schema.sql"])
        assert len(refused.value.conflicts) == 2
        found = c.check_paths(["schema.sql"]).conflicts
        assert [(x.reservation.agent, x.reservation.exclusive) for x in found] == [
            ("a", False),
            ("b", False),
        ]


def test_renewal_keeps_the_id_and_replaces_the_terms(board: Board) -> None:
    with client_for(board, "a") as a:
        (first,) = a.reserve(["lib/**"], reason="one", ttl_s=60).reservations
        board.clock.advance(0.01)
        (again,) = a.reserve(["lib/**", "lib/**"], exclusive=False, ttl_s=120).reservations
        assert again.id == first.id and again.created_at == first.created_at
        assert again.expires_at > first.expires_at
        assert (again.exclusive, again.reason, again.ttl_s) == (False, None, 120)
        assert len(a.reservations().reservations) == 1


def test_check_list_and_release(board: Board) -> None:
    with client_for(board, "a") as a, client_for(board, "b") as b:
        r1, r2 = a.reserve(["src/auth", "README.md"]).reservations
        (r3,) = b.reserve(["src/ui/*.tsx"]).reservations
        found = b.check_paths(
            ["/repo/src/auth/login.py", "src/ui/App.tsx", "src/authz/x", "README.md"]
        ).conflicts
        assert [(x.path, x.reservation.id) for x in found] == [
            ("/repo/src/auth/login.py", r1.id),
            ("README.md", r2.id),
        ]
        # Without `agent`, every agent's reservations count (mine too).
        with board.seat() as anyone:
            everyone = anyone.check_paths(["src/ui/App.tsx"], project=PROJECT).conflicts
            assert [x.reservation.id for x in everyone] == [r3.id]
            listed = anyone.reservations().reservations
            assert [r.id for r in listed] == [r1.id, r2.id, r3.id]
        assert b.unreserve(ids=[r1.id]).released == 0  # never another agent's
        assert a.unreserve(["README.md"]).released == 1
        assert a.unreserve(ids=[r1.id]).released == 1
        assert a.unreserve().released == 0
        assert b.unreserve().released == 1
        assert a.reservations(agent="a").reservations == []


def test_task_bound_reservations_end_with_the_claim(board: Board) -> None:
    endings: dict[str, Callable[[Seat, Task], object]] = {
        "complete": lambda c, t: c.complete(t.id, fence=t.fence),
        "fail": lambda c, t: c.fail(t.id, fence=t.fence, reason="no"),
        "fail-retry": lambda c, t: c.fail(t.id, fence=t.fence, retry=True),
        "release": lambda c, t: c.release(t.id, fence=t.fence),
        "cancel": lambda c, t: c.cancel(t.id, agent="boss"),
    }
    with client_for(board, "a") as a, client_for(board, "b") as b:
        for n, (name, end) in enumerate(endings.items()):
            task = a.post(name).task
            claimed = a.claim(task.id).task
            pattern = f"area{n}/**"
            (held,) = a.reserve([pattern], task_id=task.id).reservations
            assert held.task_id == task.id
            with pytest.raises(Reserved):
                b.reserve([pattern])
            end(a, claimed)
            assert a.reservations(agent="a").reservations == [], name
            assert b.reserve([pattern]).reservations, name
        # Lease expiry: the reservation stops counting the moment the lease lapses.
        task = a.post("short lease").task
        a.claim(task.id, lease_s=1)
        a.reserve(["expiring/**"], task_id=task.id)
        board.clock.advance(1.3)
        assert a.reservations(agent="a").reservations == []
        assert b.reserve(["expiring/**"]).reservations
        # The reaper then appends task.expired and deletes the row in that transaction.
        assert board.reap() == 1
        assert a.get(task.id).task.state == "pending"
        assert [e.type for e in a.events_since(task_id=task.id).events][-1] == "task.expired"


def test_a_task_bound_acquire_needs_a_task_you_hold(board: Board) -> None:
    with client_for(board, "a") as a, client_for(board, "b") as b:
        task = a.post("mine").task
        with pytest.raises(NotFound):
            a.reserve(["x/**"], task_id=999)
        with pytest.raises(LeaseLost) as pending:
            a.reserve(["x/**"], task_id=task.id)
        assert pending.value.task is not None and pending.value.task.state == "pending"
        a.claim(task.id)
        with pytest.raises(LeaseLost):
            b.reserve(["x/**"], task_id=task.id)


def test_heartbeat_renews_reservations(board: Board) -> None:
    with client_for(board, "a") as a:
        (before,) = a.reserve(["hot/**"], ttl_s=30).reservations
        board.clock.advance(0.05)
        beat = a.heartbeat()
        assert beat.reservations_renewed == 1
        (after,) = a.reservations().reservations
        assert after.id == before.id and after.expires_at > before.expires_at

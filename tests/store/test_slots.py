"""docs/PROTOCOL-1.2.md section 13 on the store (`store/slots.py`): a lock granted once,
renewed by its holder, naming who holds it, and a task-bound slot ending with its task.

Moved from tests/system/test_slots.py (issue 45 item 4), which keeps what needs a
process: racing processes, waiting acquires, a lease lapsing under a waiter, the
wire's refusals, the CLI and ports.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from coordd_client import methods_slots
from coordd_wire.errors import Conflict
from coordd_wire.wire import Event
from store.board import Board, Seat

pytestmark = pytest.mark.both_backends

PROJECT = "/repo"


def client_for(board: Board, agent: str, project: str = PROJECT) -> Seat:
    return board.seat(agent, project)


def slot_events(client: Seat) -> list[Event]:
    return client.events_since(types=["slot.granted", "slot.released"]).events


def test_a_lock_is_granted_once_renewed_by_its_holder_and_names_who_holds_it(
    board: Board,
) -> None:
    with client_for(board, "a") as a, client_for(board, "b") as b:
        first = a.acquire_slot("migrations", ttl_s=300).lease
        assert (first.name, first.agent, first.capacity, first.fence) == (
            "migrations", "a", 1, first.id,
        )  # fmt: skip
        again = a.acquire_slot("migrations").lease  # the holder again: the same grant
        assert again.fence == first.fence
        with pytest.raises(Conflict) as refused:
            b.acquire_slot("migrations")
        assert refused.value.code == -32002 and "held by a" in refused.value.message
        # How long from now: the renewal above took the default ttl, 600 s.
        assert re.search(r"until \S+Z \(in (9|10) min\)", refused.value.message)
        assert [h["agent"] for h in refused.value.data["holders"]] == ["a"]
        # Another project is another namespace.
        with client_for(board, "b", "/other") as elsewhere:
            assert elsewhere.acquire_slot("migrations").lease.agent == "b"
        assert a.release_slots(["migrations"]).released == 1
        later = b.acquire_slot("migrations").lease
        assert later.fence > first.fence  # a new grant: a newer fence
        kinds = [(e.type, e.slot.agent if e.slot else None) for e in slot_events(a)]
        # This project's only (the client's default project filters the log).
        assert kinds == [("slot.granted", "a"), ("slot.released", "a"), ("slot.granted", "b")]
        assert all(e.task is None and e.project for e in slot_events(a))


def test_a_task_bound_slot_ends_when_its_task_leaves_claimed(board: Board) -> None:
    with client_for(board, "a") as a, client_for(board, "b") as b:
        task = a.post("migrate").task
        held = a.claim(task.id)
        a.acquire_slot("migrations", task_id=task.id)
        a.release(task.id, fence=held.task.fence)
        # At once, before the reaper: the lease stopped counting with its task.
        assert a.slots(name="migrations").leases == []
        assert b.acquire_slot("migrations").lease.agent == "b"


def test_a_slots_refusals_name_it_as_it_is_written_not_as_a_python_repr(board: Board) -> None:
    """Found in review (issue 47 item 4): `coord slot acquire test-db --capacity 3` said
    "slot 'test-db' is held with capacity 2, not 3", the daemon's words reaching the CLI
    as they are; a slot's name is plain (no quoting needed: letters, digits, `._:/@+-`)."""
    with client_for(board, "a") as a, client_for(board, "b") as b:
        a.acquire_slot("test-db", capacity=2)
        a.lease_port("dev-server")
        with client_for(board, "c") as c:
            c.acquire_slot("test-db", capacity=2)  # full now: 2 of 2
        calls: list[Callable[[], object]] = [
            lambda: b.acquire_slot("test-db", capacity=3),
            lambda: b.acquire_slot("test-db", capacity=2),
            lambda: b.acquire_slot("dev-server"),
            lambda: b.lease_port("test-db"),
        ]
        refusals = []
        for call in calls:
            with pytest.raises(Conflict) as refused:
                call()
            refusals.append(refused.value.message)
        assert refusals[0].startswith("slot test-db is held with capacity 2, not 3:")
        assert refusals[1].startswith("slot test-db is full (2 of 2): held by a")
        assert refusals[2].startswith("dev-server is the name of a port lease")
        assert refusals[3].startswith("test-db is a slot in this project, not a port lease")
        assert not any("'" in said for said in refusals), refusals


def test_a_port_lease_answers_without_holders_and_a_slot_with_them(board: Board) -> None:
    """1.2 section 13: `port.lease`'s answer has no `holders` member (absent, not null);
    `slot.acquire`'s has it."""
    with client_for(board, "a") as a:
        port = a.send(methods_slots.lease_port("dev-server", agent="a", project="/p").as_type(dict))
        slot = a.send(methods_slots.acquire_slot("db", agent="a", project="/p").as_type(dict))
    assert "holders" not in port and port["lease"]["port"] > 0
    assert slot["holders"] == 1

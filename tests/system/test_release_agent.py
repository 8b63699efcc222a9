"""Protocol 1.2 `agent.release` over a real daemon (docs/PROTOCOL-1.2.md section 2):
a human lets go of a dead tab's claims, reservations, assignments and slots as itself:
the wire, the CLI and slot waiters here; the release itself on the store is
tests/store/test_holding.py."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from test_slots import wait_until_waiting

from coordd_client import Client
from coordd_client.paging import task_history
from support import DaemonProcess, RawConnection, coord

pytestmark = pytest.mark.both_backends

PROJECT = "/repo"
OTHER = "/other"
DEAD = "codex-mcp-client-4242-1a2b"
HUMAN = "human-alice"


def client_for(daemon: DaemonProcess, agent: str, project: str = PROJECT) -> Client:
    return Client(daemon.socket_path, agent=agent, project=project)


def test_params_are_validated_naming_the_field(daemon: DaemonProcess) -> None:
    conn = RawConnection(daemon.socket_path)
    try:
        for params, field in (
            ({"agent": HUMAN}, "of"),
            ({"of": DEAD}, "agent"),
            ({"agent": HUMAN, "of": " x"}, "of"),
            ({"agent": HUMAN, "of": "a\u200bb"}, "of"),
            ({"agent": HUMAN, "of": DEAD, "reason": "r" * 1025}, "reason"),
            ({"agent": HUMAN, "of": DEAD, "project": ""}, "project"),
            ({"agent": HUMAN, "of": DEAD, "fence": 1}, "fence"),
        ):
            error = conn.call("agent.release", params)["error"]
            assert error["code"] == -32602, params
            assert error["data"]["field"] == field, (params, error)
    finally:
        conn.close()


def test_coord_release_agent_records_the_human(daemon: DaemonProcess) -> None:
    with client_for(daemon, DEAD) as dead:
        task = dead.post("held by a crashed tab").task
        dead.claim(task.id)
        dead.reserve(["src/**"])
    out = coord(
        "--agent", HUMAN, "--json", "release-agent", DEAD, "--reason", "crashed",
        socket=daemon.socket_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"claims": 1, "reservations": 1, "unassigned": 0, "slots": 0}
    human = coord("--agent", HUMAN, "release-agent", DEAD, socket=daemon.socket_path)
    assert human.returncode == 0, human.stderr
    assert f"released {DEAD} in every project: 0 claims," in human.stdout
    with client_for(daemon, HUMAN) as reader:
        event = task_history(reader, task.id)[-1]
    assert (event.type, event.agent, event.of, event.reason) == (
        "task.released", HUMAN, DEAD, "crashed",
    )  # fmt: skip


def test_coord_release_agent_names_a_name_never_seen(daemon: DaemonProcess) -> None:
    with client_for(daemon, DEAD) as dead:
        dead.post("seen once")
    typo = coord("--agent", HUMAN, "release-agent", DEAD + "x", socket=daemon.socket_path)
    assert typo.returncode == 0, typo.stderr
    assert f"no agent named {DEAD}x has been seen; nothing was released" in typo.stderr
    known = coord("--agent", HUMAN, "release-agent", DEAD, socket=daemon.socket_path)
    assert known.returncode == 0, known.stderr
    assert "has been seen" not in known.stderr


def test_coord_names_an_assignee_never_seen(daemon: DaemonProcess) -> None:
    with client_for(daemon, DEAD) as dead:
        dead.post("seen once")
    typo = coord(
        "--agent", HUMAN, "post", "for a typo", "--to", DEAD + "x", socket=daemon.socket_path
    )
    assert typo.returncode == 0, typo.stderr
    assert f"no agent named {DEAD}x has been seen; only that name can claim it" in typo.stderr
    known = coord("--agent", HUMAN, "post", "for the dead", "--to", DEAD, socket=daemon.socket_path)
    assert known.returncode == 0, known.stderr
    assert "has been seen" not in known.stderr
    assigned = coord("--agent", HUMAN, "assign", "1", DEAD + "y", socket=daemon.socket_path)
    assert f"no agent named {DEAD}y has been seen" in assigned.stderr


def test_release_ends_the_dead_tabs_slots_and_wakes_their_waiters(daemon: DaemonProcess) -> None:
    """A dead tab's lock (and port, and a slot bound to its claim) would hold until its
    time ran out: releasing the agent ends them at once, in id order, says who did, and
    the waiter behind the lock gets it. The slot its landing holds stays with the landing;
    a `land:` slot it took by hand is not a landing's, and goes."""
    with (
        client_for(daemon, DEAD) as dead,
        client_for(daemon, "codex-2") as other,
        client_for(daemon, HUMAN) as human,
        ThreadPoolExecutor(1) as pool,
    ):
        lock = dead.acquire_slot("migrations", ttl_s=3600).lease
        dead.lease_port("web", ttl_s=3600)
        task = dead.post("seed the test db").task
        dead.claim(task.id, lease_s=3600)
        dead.acquire_slot("test-db", task_id=task.id, ttl_s=3600)
        dead.acquire_slot("land:release", ttl_s=3600)  # by hand: it stops that queue
        queued = dead.enqueue_landing("feature", "main", ["src/a.py"]).landing
        landing = dead.start_landing(queued.id).landing
        waiting = pool.submit(other.acquire_slot, "migrations", wait_s=120)
        wait_until_waiting(daemon, 1)
        result = human.release_agent(DEAD, reason="tab crashed")
        assert (result.claims, result.slots) == (1, 4)  # all but the landing's slot
        granted = waiting.result(timeout=120).lease
        assert granted.agent == "codex-2" and granted.fence > lock.fence
        left = [lease.name for lease in human.slots(project=PROJECT).leases]
        assert sorted(left) == sorted(["migrations", f"land:{landing.onto}"])
        ended = human.events_since(types=["slot.released"]).events
        assert [(e.agent, e.slot.name, e.reason) for e in ended if e.slot is not None] == [
            (DEAD, name, f"released by {HUMAN}: tab crashed")
            for name in ("migrations", "web", "test-db", "land:release")
        ]

"""docs/PROTOCOL-1.2.md section 13 over a real daemon: slots and ports raced and waited
for, their leases and events (a lock's grants on the store: tests/store/test_slots.py)."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from typing import Any

import pytest
from racing import race

from coordd_client import Client
from coordd_wire.errors import Conflict, InvalidParams, LeaseLost
from coordd_wire.wire import Event
from support import DaemonProcess, RawConnection, coord

pytestmark = pytest.mark.both_backends

PROJECT = "/repo"


def client_for(daemon: DaemonProcess, agent: str, project: str = PROJECT) -> Client:
    return Client(daemon.socket_path, agent=agent, project=project, timeout_s=60)


def slot_stats(daemon: DaemonProcess) -> dict[str, int]:
    conn = RawConnection(daemon.socket_path)
    try:
        stats: dict[str, int] = conn.call("server.info")["result"]["slots"]
        return stats
    finally:
        conn.close()


def slot_events(client: Client) -> list[Event]:
    return client.events_since(types=["slot.granted", "slot.released"]).events


def wait_until_waiting(daemon: DaemonProcess, count: int) -> None:
    """Block until `count` calls wait in the daemon's slot queue. Bounded in time, not in
    tries: on a busy machine the waiter's thread may not run for many round trips of
    this one; only a hang crosses a minute."""
    conn = RawConnection(daemon.socket_path)
    deadline = time.monotonic() + 60
    try:
        while conn.call("server.info")["result"]["slots"]["waiting"] < count:
            assert time.monotonic() < deadline, f"{count} waiter(s) never arrived"
            time.sleep(0.01)
    finally:
        conn.close()


def test_bad_slot_input_gets_a_clear_error(daemon: DaemonProcess) -> None:
    with client_for(daemon, "a") as a:
        with pytest.raises(InvalidParams):
            a.acquire_slot("has space")
        with pytest.raises(InvalidParams):
            a.acquire_slot("x", capacity=0)
        with pytest.raises(InvalidParams):
            a.lease_port("p", low=30001, high=30000)
        with pytest.raises(LeaseLost):
            task = a.post("t").task
            a.acquire_slot("x", task_id=task.id)  # not held by a
        a.acquire_slot("db", capacity=2)
        with client_for(daemon, "b") as b, pytest.raises(Conflict) as refused:
            b.acquire_slot("db", capacity=3)
        assert "capacity 2" in refused.value.message


def test_capacity_is_never_exceeded_under_32_racing_processes(daemon: DaemonProcess) -> None:
    results = race(
        "slotter.py",
        daemon.socket_path,
        [[f"w{i}", PROJECT, "slot", "pool", "3"] for i in range(32)],
        timeout_s=240,
    )
    assert len({r["fence"] for r in results}) == 32
    assert max(r["holders_seen"] for r in results) <= 3
    # The log, replayed in seq order, never has more than 3 holders at once.
    with client_for(daemon, "judge") as judge:
        holding: set[str] = set()
        most = 0
        for event in slot_events(judge):
            assert event.slot is not None
            if event.type == "slot.granted":
                holding.add(event.slot.agent)
            else:
                holding.discard(event.slot.agent)
            most = max(most, len(holding))
    assert most == 3  # reached, never passed


def test_waiters_are_granted_in_the_order_they_arrived(daemon: DaemonProcess) -> None:
    granted: list[str] = []

    def wait_for_it(agent: str) -> None:
        with client_for(daemon, agent) as client:
            client.acquire_slot("build", wait_s=60)
            granted.append(agent)
            client.release_slots(["build"])

    with client_for(daemon, "holder") as holder:
        holder.acquire_slot("build")
        threads = []
        for count, agent in enumerate(["first", "second", "third"], start=1):
            thread = threading.Thread(target=wait_for_it, args=(agent,))
            thread.start()
            threads.append(thread)
            wait_until_waiting(daemon, count)
        tries = slot_stats(daemon)["attempts"]
        holder.release_slots(["build"])
        for thread in threads:
            thread.join(timeout=120)
    assert granted == ["first", "second", "third"]
    # No polling: after the release, each waiter tries at most twice (when the one
    # ahead leaves the line, which may still hold it, and when that one releases).
    assert slot_stats(daemon)["attempts"] - tries <= 2 * 3


def test_a_lease_lapses_without_calls_and_a_heartbeat_renews_it(daemon: DaemonProcess) -> None:
    with client_for(daemon, "a") as a, client_for(daemon, "b") as b:
        lease = a.acquire_slot("gpu", ttl_s=1).lease
        a.heartbeat()
        renewed = a.slots(name="gpu").leases[0]
        assert renewed.expires_at >= lease.expires_at
        # b waits; a stops calling; its lease lapses one ttl after its last call.
        won = b.acquire_slot("gpu", wait_s=30).lease
        assert won.agent == "b" and won.fence > lease.fence
        released = [e for e in slot_events(b) if e.type == "slot.released"]
        assert [(e.slot.agent if e.slot else None, e.reason) for e in released] == [
            ("a", "expired")
        ]


def test_ports_are_unique_across_32_processes_and_reused_after_release(
    daemon: DaemonProcess,
) -> None:
    low, high = 31000, 31031  # exactly 32
    results = race(
        "slotter.py",
        daemon.socket_path,
        [[f"p{i}", f"/project-{i % 4}", "port", str(low), str(high)] for i in range(32)],
    )
    ports: list[Any] = sorted(r["port"] for r in results)
    assert ports == list(range(low, high + 1))  # unique across projects, none outside
    with client_for(daemon, "late") as late:
        with pytest.raises(Conflict) as full:
            late.lease_port("web", low=low, high=high)
        assert "no free port" in full.value.message
        freed = next(r for r in results if r["port"] == 31017)
        with client_for(daemon, freed["agent"], f"/project-{int(freed['agent'][1:]) % 4}") as c:
            assert c.release_slots([f"web-{freed['agent']}"]).released == 1
        assert late.lease_port("web", low=low, high=high).lease.port == 31017
        # The same name and agent again: the same port, renewed.
        assert late.lease_port("web", low=low, high=high).lease.port == 31017


def test_the_cli_acquires_leases_ports_and_refuses_with_exit_3(daemon: DaemonProcess) -> None:
    def run(agent: str, *args: str) -> subprocess.CompletedProcess[str]:
        return coord(*args, "--agent", agent, "--project", PROJECT, socket=daemon.socket_path)

    held = run("a", "slot", "acquire", "deploy")
    assert held.returncode == 0 and held.stdout.startswith("acquired deploy")
    refused = run("b", "slot", "acquire", "deploy")
    assert refused.returncode == 3 and "held by a" in refused.stderr
    port = run("b", "port", "web", "--range", "35000-35009")
    assert (port.returncode, port.stdout.strip()) == (0, "35000")
    assert run("b", "port", "web", "--range", "35000-35009").stdout.strip() == "35000"
    listed = run("b", "slot", "list")
    assert "deploy" in listed.stdout and "port 35000" in listed.stdout
    bad = run("b", "port", "web", "--range", "high-low")
    assert bad.returncode == 1 and "is not LOW-HIGH" in bad.stderr
    assert run("a", "slot", "release").stdout.strip() == "released 1 lease"
    assert run("b", "slot", "acquire", "deploy").returncode == 0


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.0.2"])
def test_coord_port_skips_a_port_another_program_listens_on(
    daemon: DaemonProcess, address: str
) -> None:
    """The daemon knows only leases; the client on the machine binds to check (issue 44),
    on every address: a listener on 127.0.0.2 (or the LAN address) was missed once."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind((address, 0))
        held.listen()
        busy = held.getsockname()[1]
        span = f"{busy}-{min(busy + 9, 65535)}"
        got = coord("port", "web", "--range", span, "--agent", "b", "--project", PROJECT,
                    socket=daemon.socket_path)  # fmt: skip
        again = coord("port", "web", "--range", span, "--agent", "b", "--project", PROJECT,
                      socket=daemon.socket_path)  # fmt: skip
    assert got.returncode == 0, got.stderr
    port = int(got.stdout.strip())
    assert busy < port <= busy + 9
    assert f"skipped {busy}" in got.stderr and "in use by another program" in got.stderr
    assert again.stdout.strip() == str(port) and "skipped" not in again.stderr  # a renewal
    with Client(daemon.socket_path) as client:
        leases = client.slots(project=PROJECT, name="web").leases
    assert [(x.agent, x.port) for x in leases] == [("b", port)]  # the busy one given back

"""Protocol 1.1 section 10 over a real daemon: reservations raced by processes, waiting
acquires, the wire's refusals, an upgrade, the CLI. Their rules on the store are the
store tier's: tests/store/test_reservations.py."""

from __future__ import annotations

import itertools
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from racing import race

from coordd.store.schema import MIGRATIONS
from coordd_client import Client, LeaseLost, Reserved
from coordd_wire.patterns import overlap, parse
from support import DaemonProcess, RawConnection, coord

pytestmark = pytest.mark.both_backends

PROJECT = "/repo"


def client_for(daemon: DaemonProcess, agent: str, project: str = PROJECT) -> Client:
    return Client(daemon.socket_path, agent=agent, project=project)


def queue_state(daemon: DaemonProcess, what: str) -> int:
    """server.info's `reservations` (beyond the protocol): `attempts` waiting acquires
    have made, or how many are `waiting` now."""
    conn = RawConnection(daemon.socket_path)
    try:
        return int(conn.call("server.info")["result"]["reservations"][what])
    finally:
        conn.close()


def attempts(daemon: DaemonProcess) -> int:
    return queue_state(daemon, "attempts")


def test_sixteen_processes_racing_for_overlapping_reservations(daemon: DaemonProcess) -> None:
    """Two conflicting sets of 8: exactly one winner each; no one holds part of a request."""
    src = ["src/**", "src/a.py", "src/*.py", "src/a.py/", "src", "src/**/a.py", "src/a.py", "src/*"]
    assert all(overlap(parse(x), parse(y)) for x, y in itertools.combinations(src, 2))
    requests = [[f"s{n}", PROJECT, pattern] for n, pattern in enumerate(src)]
    requests += [[f"l{n}", PROJECT, "lib/shared.py", f"lib/own{n}/**"] for n in range(8)]
    outputs = race("reserver.py", daemon.socket_path, requests)
    for prefix in ("s", "l"):
        winners = [o for o in outputs if o["agent"].startswith(prefix) and o["won"]]
        assert len(winners) == 1, outputs
    with Client(daemon.socket_path) as client:
        live = client.reservations(project=PROJECT).reservations
    by_agent: dict[str, set[str]] = {}
    for r in live:
        by_agent.setdefault(r.agent, set()).add(r.pattern)
    for output, request in zip(outputs, requests, strict=True):
        wanted = set(request[2:])
        assert by_agent.get(output["agent"], set()) == (wanted if output["won"] else set())
    for x, y in itertools.combinations(live, 2):
        if x.agent != y.agent:
            assert not overlap(parse(x.pattern), parse(y.pattern)), (x, y)


def test_a_waiting_acquire_is_granted_when_the_holder_releases_without_polling(
    daemon: DaemonProcess,
) -> None:
    with client_for(daemon, "a") as a:
        a.reserve(["db/**"])
    outcome: dict[str, Any] = {}

    def wait_for_it() -> None:
        with client_for(daemon, "b") as b:
            started = time.monotonic()
            outcome["granted"] = b.reserve(["db/schema.sql"], wait_s=30).reservations
            outcome["after_s"] = time.monotonic() - started

    before = attempts(daemon)
    waiter = threading.Thread(target=wait_for_it)
    waiter.start()
    deadline = time.monotonic() + 10
    while attempts(daemon) == before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert attempts(daemon) == before + 1  # the first try, refused
    time.sleep(1.5)
    assert attempts(daemon) == before + 1, "the waiter tried again with nothing changed"
    # Other requests on other connections go on meanwhile; so does a check.
    with client_for(daemon, "c") as c:
        assert c.check_paths(["db/schema.sql"]).conflicts
        assert c.unreserve().released == 0  # c held nothing: no wake-up needed
    with client_for(daemon, "a") as a:
        assert a.unreserve().released == 1
    waiter.join(10)
    assert [r.pattern for r in outcome["granted"]] == ["db/schema.sql"]
    assert attempts(daemon) == before + 2  # woken once, granted on that try


def test_a_waiting_acquire_times_out_with_the_same_error(daemon: DaemonProcess) -> None:
    with client_for(daemon, "a") as a, client_for(daemon, "b") as b:
        a.reserve(["db/**"])
        started = time.monotonic()
        with pytest.raises(Reserved) as refused:
            b.reserve(["db/x"], wait_s=0.5)
        assert time.monotonic() - started >= 0.5
        assert [c.pattern for c in refused.value.conflicts] == ["db/x"]


def test_a_waiting_acquire_is_granted_when_the_reservation_expires(daemon: DaemonProcess) -> None:
    with client_for(daemon, "a") as a, client_for(daemon, "b") as b:
        a.reserve(["tmp/**"], ttl_s=1)
        granted = b.reserve(["tmp/x"], wait_s=10).reservations
        assert [r.agent for r in granted] == ["b"]


def test_a_waiting_acquire_wakes_when_the_blocking_task_completes(daemon: DaemonProcess) -> None:
    with client_for(daemon, "a") as a:
        task = a.post("owner").task
        claimed = a.claim(task.id).task
        a.reserve(["pkg/**"], task_id=task.id)
        timer = threading.Timer(0.5, lambda: a.complete(task.id, fence=claimed.fence))
        timer.start()
        with client_for(daemon, "b") as b:
            assert b.reserve(["pkg/mod.py"], wait_s=20).reservations
        timer.join()


def test_conflicting_waiters_are_granted_in_arrival_order(daemon: DaemonProcess) -> None:
    with client_for(daemon, "holder") as holder:
        holder.reserve(["core/**"])
    order: list[str] = []
    lock = threading.Lock()

    def wait(agent: str) -> None:
        with client_for(daemon, agent) as c:
            c.reserve(["core/**"], wait_s=30)
            with lock:
                order.append(agent)
            time.sleep(0.2)
            c.unreserve()

    threads = []
    for n, agent in enumerate(["w1", "w2", "w3"]):
        thread = threading.Thread(target=wait, args=(agent,))
        thread.start()
        threads.append(thread)
        deadline = time.monotonic() + 10
        while queue_state(daemon, "waiting") < n + 1 and time.monotonic() < deadline:
            time.sleep(0.01)
    # w2 and w3 never even tried: w1, ahead of them, wants what they want.
    assert attempts(daemon) == 1
    with client_for(daemon, "holder") as holder:
        holder.unreserve()
    for thread in threads:
        thread.join(30)
    assert order == ["w1", "w2", "w3"]


def test_a_waiter_whose_task_leaves_claimed_is_refused(daemon: DaemonProcess) -> None:
    with client_for(daemon, "a") as a, client_for(daemon, "b") as b:
        a.reserve(["web/**"])
        task = b.post("b's").task
        claimed = b.claim(task.id).task
        released: list[str] = []
        timer = threading.Timer(
            0.5,
            lambda: released.append(a.release(task.id, agent="b", fence=claimed.fence).task.state),
        )
        timer.start()
        with pytest.raises(LeaseLost):
            b.reserve(["web/x"], task_id=task.id, wait_s=20)
        # The refusal can reach b before a has read its own reply; closing a
        # then would fail the release in its thread (a loaded run's error).
        timer.join()
    assert released == ["pending"]


def test_bad_reservation_input_is_refused_naming_the_field(daemon: DaemonProcess) -> None:
    conn = RawConnection(daemon.socket_path)
    base = {"agent": "a", "project": PROJECT}
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("reservation.acquire", {**base, "patterns": []}, "patterns"),
        ("reservation.acquire", {**base, "patterns": ["x"] * 65}, "patterns"),
        ("reservation.acquire", {**base, "patterns": ["ok", "../up"]}, "patterns"),
        ("reservation.acquire", {**base, "patterns": ["/abs"]}, "patterns"),
        ("reservation.acquire", {**base, "patterns": [""]}, "patterns"),
        ("reservation.acquire", {**base, "patterns": ["!neg"]}, "patterns"),
        ("reservation.acquire", {**base, "patterns": ["a//b"]}, "patterns"),
        ("reservation.acquire", {**base, "patterns": ["x"], "wait_s": 601}, "wait_s"),
        ("reservation.acquire", {**base, "patterns": ["x"], "wait_s": -1}, "wait_s"),
        ("reservation.acquire", {**base, "patterns": ["x"], "ttl_s": 0}, "ttl_s"),
        ("reservation.acquire", {**base, "patterns": ["x"], "reason": "r" * 1025}, "reason"),
        ("reservation.acquire", {"agent": "a", "patterns": ["x"]}, "project"),
        ("reservation.acquire", {**base, "patterns": ["x"], "typo": 1}, "typo"),
        ("reservation.release", {**base, "patterns": ["x"], "ids": [1]}, "ids"),
        ("reservation.check", {"project": PROJECT, "paths": ["/elsewhere/x"]}, "paths"),
        ("reservation.check", {"project": PROJECT, "paths": ["/repo"]}, "paths"),
        ("reservation.check", {"project": PROJECT, "paths": ["a/../b"]}, "paths"),
        ("reservation.check", {"project": PROJECT, "paths": []}, "paths"),
        ("reservation.check", {"project": PROJECT, "paths": ["x"] * 257}, "paths"),
    ]
    try:
        for method, params, field in cases:
            error = conn.call(method, params)["error"]
            assert error["code"] == -32602, (method, params, error)
            assert error["data"]["field"] == field, (method, params, error)
            assert error["message"]
        assert conn.call("reservation.list", {})["result"] == {"reservations": []}
    finally:
        conn.close()


def test_a_database_of_the_previous_release_gains_reservations(workdir: Path) -> None:
    db = workdir / "v2.db"
    conn = sqlite3.connect(db)
    for step in MIGRATIONS[:2]:  # the schema the previous release (1.1 section 9) wrote
        for statement in step:
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 2")
    conn.execute(
        "INSERT INTO tasks (project, kind, title, body, state, priority, tags, created_at,"
        " updated_at) VALUES ('/repo', 'task', 'old', '', 'pending', 0, '[]', 't', 't')"
    )
    conn.commit()
    conn.close()
    daemon = DaemonProcess(workdir, db_path=db).start()
    try:
        with client_for(daemon, "a") as a:
            assert a.get(1).task.title == "old"
            assert a.claim(1).won
            assert a.reserve(["x/**"], task_id=1).reservations[0].task_id == 1
            assert "reservations" in a.server_info().features
    finally:
        daemon.stop()
    check = sqlite3.connect(db)
    assert check.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
    check.close()


def test_the_cli_reserves_checks_and_releases(daemon: DaemonProcess, workdir: Path) -> None:
    s = daemon.socket_path
    project = str(workdir.resolve())
    (workdir / "src").mkdir()
    mine = coord("reserve", "src/auth/**", "--reason", "login", "--project", project,
                 "--agent", "a", socket=s)  # fmt: skip
    assert mine.returncode == 0 and "src/auth/**" in mine.stdout
    refused = coord("reserve", "src/auth/x.py", "README.md", "--project", project, "--agent", "b",
                    socket=s)  # fmt: skip
    assert refused.returncode == 3 and "held by a" in refused.stderr
    held = coord("check", str(workdir / "src/auth/x.py"), "--project", project, "--agent", "b",
                 socket=s)  # fmt: skip
    assert held.returncode == 3 and "held by a" in held.stdout and "login" in held.stdout
    free = coord("check", str(workdir / "src/auth/x.py"), "--project", project, "--agent", "a",
                 socket=s)  # fmt: skip
    assert free.returncode == 0
    listing = coord("reservations", "--project", project, socket=s)
    assert "src/auth/**" in listing.stdout and "excl" in listing.stdout
    as_json = json.loads(coord("reservations", "--all-projects", "--json", socket=s).stdout)
    assert [r["pattern"] for r in as_json["reservations"]] == ["src/auth/**"]
    gone = coord("unreserve", "--project", project, "--agent", "a", socket=s)
    assert gone.returncode == 0 and "released 1" in gone.stdout
    assert coord("reserve", "src/auth/x.py", "--project", project, "--agent", "b",
                 socket=s).returncode == 0  # fmt: skip

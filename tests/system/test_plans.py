"""Protocol 1.1 section 9 over a real daemon: dependencies, readiness and assignment
between processes; their rules on the store are tests/store/test_writes.py."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from racing import race

from coordd.store.schema import MIGRATIONS
from coordd_client import Client, Conflict, InvalidParams, NotFound
from support import DaemonProcess, RawConnection, coord

pytestmark = pytest.mark.both_backends


def events_of(client: Client, after_seq: int = 0) -> list[tuple[str, int | None]]:
    return [(e.type, e.task_id) for e in client.events_since(after_seq=after_seq).events]


def test_a_chain_is_handed_out_in_order_to_racing_processes(daemon: DaemonProcess) -> None:
    with Client(daemon.socket_path, agent="planner", project="/plan") as client:
        a = client.post("write the migration").task
        b = client.post("switch the reads", depends_on=[a.id]).task
        c = client.post("drop the old column", depends_on=[b.id]).task
        assert (a.ready, b.blocked_by, c.blocked_by) == (True, [a.id], [b.id])
    outputs = race(
        "plan_worker.py", daemon.socket_path, [[f"w{n}", "/plan", "3"] for n in range(8)]
    )
    assert sorted(i for done in outputs for i in done) == [a.id, b.id, c.id]
    with Client(daemon.socket_path) as client:
        log = events_of(client)
    # Each step was claimed only after the one before it completed and unblocked it.
    claimed = [i for kind, i in log if kind == "task.claimed"]
    assert claimed == [a.id, b.id, c.id]
    for before, after in ((a.id, b.id), (b.id, c.id)):
        assert log.index(("task.completed", before)) < log.index(("task.unblocked", after))
        assert log.index(("task.unblocked", after)) < log.index(("task.claimed", after))


def test_a_waiter_for_ready_work_wakes_when_a_task_is_unblocked(daemon: DaemonProcess) -> None:
    with Client(daemon.socket_path, agent="me", project="/w") as client:
        first = client.post("first").task
        second = client.post("second", depends_on=[first.id]).task
        client.claim(first.id)
        seq = client.server_info().last_seq
        waiter = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys, json; sys.path.insert(0, sys.argv[2]);"
                "from coordd_client import Client;"
                "c = Client(sys.argv[1]);"
                "r = c.wait(timeout_s=30, project='/w', ready=True, after_seq=int(sys.argv[3]));"
                "print(json.dumps([r.task.id if r.task else None]))",
                str(daemon.socket_path),
                str(Path(__file__).resolve().parents[2] / "clients" / "python" / "src"),
                str(seq),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        client.complete(first.id)
        out, _ = waiter.communicate(timeout=60)
    assert json.loads(out) == [second.id]


def test_only_the_assignee_can_win_an_assigned_task(daemon: DaemonProcess) -> None:
    with Client(daemon.socket_path) as client:
        task = client.post("for tab 7", assignee="tab-7").task
    agents = [f"tab-{n}" for n in range(16)]
    outputs = race("claimer.py", daemon.socket_path, [[agent, str(task.id)] for agent in agents])
    winners = [agent for agent, [[_, won, _, _]] in zip(agents, outputs, strict=True) if won]
    assert winners == ["tab-7"]
    with Client(daemon.socket_path) as client:
        assert client.claim_next("tab-3").task is None  # skipped for everyone else
        other = client.post("someone's", assignee="tab-9").task
        mine = client.claim_next("tab-9").task
        assert mine is not None and mine.id == other.id  # for its assignee, as any


def test_assign_and_release_to_hand_work_over(daemon: DaemonProcess) -> None:
    with Client(daemon.socket_path, agent="lead") as client:
        task = client.post("review").task
        seq = client.server_info().last_seq
        assert client.assign(task.id, "reviewer").task.assignee == "reviewer"
        assert client.assign(task.id, "reviewer").task.assignee == "reviewer"  # no-op
        assert events_of(client, seq) == [("task.assigned", task.id)]
        assert client.assign(task.id, None).task.assignee is None
        client.claim(task.id)
        with pytest.raises(Conflict):
            client.assign(task.id, "reviewer")  # only a pending task
        handed = client.release(task.id, assignee="reviewer")
        assert (handed.task.state, handed.task.assignee) == ("pending", "reviewer")
        assert not client.claim(task.id).won  # now only the reviewer may
        inbox = client.wait(timeout_s=0, assignee="reviewer", ready=True)
        assert inbox.task is not None and inbox.task.id == task.id


def test_bad_dependency_and_assignment_input(daemon: DaemonProcess) -> None:
    conn = RawConnection(daemon.socket_path)
    assert "result" in conn.call("task.post", {"title": "exists"})
    too_many = conn.call("task.post", {"title": "x", "depends_on": [1] * 33})
    assert too_many["error"]["code"] == -32602
    assert too_many["error"]["data"]["field"] == "depends_on"
    unknown = conn.call("task.post", {"title": "x", "depends_on": [1, 99, 98]})
    assert unknown["error"]["code"] == -32001 and unknown["error"]["data"]["id"] == 99
    conflicting = conn.call("task.list", {"ready": True, "state": "done"})
    assert conflicting["error"]["data"]["field"] == "ready"
    omitted = conn.call("task.assign", {"id": 1})
    assert omitted["error"]["code"] == -32602 and omitted["error"]["data"]["field"] == "assignee"
    listed = conn.call("task.list", {})["result"]["tasks"]
    assert [t["title"] for t in listed] == ["exists"]  # nothing half-posted
    conn.close()
    with Client(daemon.socket_path) as client:
        with pytest.raises(NotFound):
            client.post("x", depends_on=[42])
        with pytest.raises(InvalidParams):
            client.post("x", assignee="bad\nname")


def test_a_database_of_the_previous_release_upgrades_in_place(workdir: Path) -> None:
    db = workdir / "old.db"
    conn = sqlite3.connect(db)
    for statement in MIGRATIONS[0]:  # the 1.0 schema, as the previous release wrote it
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.execute(
        "INSERT INTO tasks (project, kind, title, body, state, priority, tags, created_at,"
        " updated_at) VALUES ('p', 'task', 'old task', '', 'pending', 0, '[]', 't', 't')"
    )
    old_task = {
        "id": 1, "project": "p", "kind": "task", "title": "old task", "body": "",
        "state": "pending", "priority": 0, "tags": [], "created_by": None, "created_at": "t",
        "updated_at": "t", "claimed_by": None, "claimed_at": None, "lease_expires_at": None,
        "fence": 0, "attempts": 0, "result": None,
    }  # fmt: skip
    event = {"seq": 1, "at": "t", "type": "task.posted", "task_id": 1, "agent": None}
    conn.execute(
        "INSERT INTO events (type, project, at, data) VALUES ('task.posted', 'p', 't', ?)",
        (json.dumps({**event, "task": old_task}),),
    )
    conn.commit()
    conn.close()
    daemon = DaemonProcess(workdir, db_path=db).start()
    try:
        with Client(daemon.socket_path) as client:
            old = client.get(1).task
            assert (old.depends_on, old.blocked_by, old.assignee) == ([], [], None)
            assert [e.seq for e in client.events_since(task_id=1).events] == [1]
            assert client.claim(1, "me").won
    finally:
        daemon.stop()


def test_the_cli_posts_plans_and_hands_work_over(daemon: DaemonProcess) -> None:
    s = daemon.socket_path
    coord("post", "migrate", "--project", "/c", socket=s)
    coord("post", "switch reads", "--after", "#1", "--project", "/c", socket=s)
    coord("post", "for cursor", "--to", "cursor-2", "--project", "/c", socket=s)
    table = coord("ls", "--project", "/c", socket=s).stdout
    assert "BLOCKED BY" in table and "ASSIGNEE" in table and "cursor-2" in table
    ready = json.loads(coord("ls", "--ready", "--json", "--project", "/c", socket=s).stdout)
    assert [t["id"] for t in ready["tasks"]] == [1, 3]
    blocked = json.loads(coord("ls", "--blocked", "--json", "--project", "/c", socket=s).stdout)
    assert [t["id"] for t in blocked["tasks"]] == [2]
    refused = coord("claim", "2", "--agent", "me", socket=s)
    assert refused.returncode == 1 and "its dependencies #1 are not done yet" in refused.stderr
    assert coord("assign", "2", "me", socket=s).returncode == 0
    mine = json.loads(
        coord("ls", "--mine", "--agent", "me", "--json", "--project", "/c", socket=s).stdout
    )
    assert [t["id"] for t in mine["tasks"]] == [2]
    coord("claim", "1", "--agent", "me", socket=s)
    handed = coord("release", "1", "--agent", "me", "--to", "cursor-2", socket=s)
    assert handed.returncode == 0 and "assigned to cursor-2" in handed.stdout
    inbox = coord(
        "wait", "--to-me", "--agent", "cursor-2", "--project", "/c", "--timeout", "5", "--json",
        socket=s,
    )  # fmt: skip
    assert inbox.returncode == 0 and json.loads(inbox.stdout)["task"]["id"] in (1, 3)


def test_a_dependency_on_another_projects_task_is_shown_where_it_waits(
    daemon: DaemonProcess,
) -> None:
    """PROTOCOL.md section 9 lets `depends_on` name a task of any project; this
    project's `coord ls` never lists that task, so the CLI names its project."""
    with Client(daemon.socket_path, agent="a", project="/work/parser") as other:
        upstream = other.post("ship the parser").task
    posted = coord(
        "--project", "/work/app", "post", "use the parser", "--after", str(upstream.id),
        socket=daemon.socket_path,
    )  # fmt: skip
    assert posted.returncode == 0, posted.stderr
    assert f"#{upstream.id} is a task of project /work/parser" in posted.stderr
    listed = coord("--project", "/work/app", "ls", socket=daemon.socket_path)
    assert f"#{upstream.id}@parser" in listed.stdout, listed.stdout
    with Client(daemon.socket_path, agent="a", project="/work/parser") as other:
        other.complete(upstream.id, "a", fence=other.claim(upstream.id).task.fence)
    assert (
        "BLOCKED BY" not in coord("--project", "/work/app", "ls", socket=daemon.socket_path).stdout
    )

"""PROTOCOL.md sections 6 and 7: the event log, subscriptions with replay, task.wait
(the log's pages and filters on the store: tests/store/test_reads.py)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import trio
from racing import race

from coordd_client import Client
from coordd_client.aio import AsyncClient
from support import DaemonProcess, RawConnection, rss_kib

pytestmark = pytest.mark.both_backends


def test_a_tasks_history_is_its_events_whatever_groups_they_were_written_in(
    daemon: DaemonProcess,
) -> None:
    """A task's history walks a chain of seqs (schema.EVENT_CHAIN), linked once per
    write group: concurrent claims and releases of a few tasks put several events
    of one task in one group, and each history must still be exactly the task's
    events from the whole log, in order, paged by `after_seq` and `limit`."""

    async def churn() -> list[int]:
        async with AsyncClient.connect(daemon.socket_path) as client:
            ids = [(await client.post(f"h{n}")).task.id for n in range(4)]

            async def agent(name: str) -> None:
                for round_number in range(30):
                    task_id = ids[round_number % len(ids)]
                    if (await client.claim(task_id, name)).won:
                        await client.release(task_id, name)

            async with trio.open_nursery() as nursery:
                for n in range(6):
                    nursery.start_soon(agent, f"agent-{n}")
        return ids

    ids = trio.run(churn)
    with daemon.client() as client:
        log = client.events_since(limit=10000).events
        assert len(log) > 4 * 3
        for task_id in ids:
            expected = [e.seq for e in log if e.task_id == task_id]
            history = client.events_since(task_id=task_id, limit=10000).events
            assert [e.seq for e in history] == expected
            middle = expected[len(expected) // 2]
            page = client.events_since(task_id=task_id, after_seq=middle, limit=2)
            assert [e.seq for e in page.events] == [s for s in expected if s > middle][:2]
        assert client.events_since(task_id=ids[0], after_seq=log[-1].seq).events == []


def test_subscription_replays_then_goes_live_without_gaps_under_concurrent_writers(
    daemon: DaemonProcess,
) -> None:
    with daemon.client() as client:
        for n in range(50):
            client.post(f"before {n}")
    seen: list[int] = []
    stream = Client(daemon.socket_path).subscribe(after_seq=0)

    def write() -> None:
        race("poster.py", daemon.socket_path, [[f"w{n}", "150"] for n in range(6)])
        with daemon.client() as client:
            client.post("sentinel")  # committed after every writer's last post

    thread = threading.Thread(target=write)
    thread.start()
    try:
        for event in stream:
            seen.append(event.seq)
            if event.task is not None and event.task.title == "sentinel":
                break
    finally:
        stream.close()
        thread.join(60)
    assert seen == list(range(1, 50 + 6 * 150 + 2))


@pytest.mark.timeout(600)  # 4,000 posts through racing processes on a busy machine
def test_lagging_subscriber_is_closed_and_resumes_without_loss(
    workdir: Path, store: str | None
) -> None:
    """The subscriber reads nothing while 4,000 events are posted. What is under test is
    the lag rule (closed `lagged`, resumed by seq), not the write timeout: on a busy
    machine the posting alone can outlast the default 10 s a blocked write may take, and
    the daemon would cut the connection before the close notice. So the write timeout is
    raised for this daemon; every other limit is the default."""
    daemon = DaemonProcess(workdir, store=store, args=("--write-timeout", "600")).start()
    raw = RawConnection(daemon.socket_path, timeout_s=300)
    try:
        _lag_and_resume(daemon, raw)
    finally:
        raw.close()
        daemon.ensure_dead()


def _lag_and_resume(daemon: DaemonProcess, raw: RawConnection) -> None:
    subscribed = raw.call("events.subscribe", {})
    assert subscribed["result"]["last_seq"] == 0
    rss_before = rss_kib(daemon.pid)
    # Post far more events than the socket, the outbox and the 1,000-event backlog hold,
    # while the subscriber reads nothing.
    race("poster.py", daemon.socket_path, [[f"w{n}", "1000"] for n in range(4)])
    rss_after = rss_kib(daemon.pid)
    delivered: list[int] = []
    while True:
        frame = raw.recv()
        if frame["method"] == "event":
            delivered.append(frame["params"]["event"]["seq"])
            continue
        assert frame["method"] == "subscription.closed"
        closed = frame["params"]
        break
    assert (
        closed["reason"] == "lagged"
        and closed["subscription"] == subscribed["result"]["subscription"]
    )
    assert delivered == list(range(1, closed["last_seq"] + 1))
    assert closed["last_seq"] < 4000
    with daemon.client() as client:
        rest = client.events_since(after_seq=closed["last_seq"], limit=10000)
        assert [e.seq for e in rest.events] == list(range(closed["last_seq"] + 1, 4001))
        assert client.server_info().last_seq == 4000
    # The backlog is bounded: 4,000 events behind did not cost the daemon 4,000 events of memory.
    assert rss_after - rss_before < 20_000, (rss_before, rss_after)


def test_subscription_filters_and_unsubscribe(daemon: DaemonProcess) -> None:
    raw = RawConnection(daemon.socket_path)
    sub = raw.call("events.subscribe", {"project": "/p", "types": ["task.claimed"]})["result"]
    with daemon.client() as client:
        other = client.post("elsewhere", project="/q").task
        client.claim(other.id, "a")
        mine = client.post("mine", project="/p").task
        client.claim(mine.id, "a")
    frame = raw.recv()
    assert frame["method"] == "event" and frame["params"]["subscription"] == sub["subscription"]
    assert frame["params"]["event"]["task_id"] == mine.id
    assert frame["params"]["event"]["type"] == "task.claimed"
    assert (
        raw.call("events.unsubscribe", {"subscription": sub["subscription"]}, request_id=9)[
            "result"
        ]
        == {}
    )
    again = raw.call("events.unsubscribe", {"subscription": sub["subscription"]}, request_id=10)
    assert again["error"]["code"] == -32001
    raw.close()


def test_shutdown_closes_subscriptions_with_reason(daemon: DaemonProcess) -> None:
    raw = RawConnection(daemon.socket_path)
    sub = raw.call("events.subscribe", {})["result"]
    assert daemon.proc is not None
    daemon.proc.send_signal(15)
    frame = raw.recv()
    assert frame == {
        "jsonrpc": "2.0",
        "method": "subscription.closed",
        "params": {"subscription": sub["subscription"], "reason": "shutdown", "last_seq": 0},
    }
    raw.close()
    assert daemon.proc.wait(20) == 0


def test_event_stream_resumes_across_a_daemon_restart(daemon: DaemonProcess) -> None:
    stream = Client(daemon.socket_path).subscribe(after_seq=0)
    with daemon.client() as client:
        client.post("one")
    assert next(stream).seq == 1
    assert daemon.stop() == 0
    daemon.start()
    with daemon.client() as client:
        client.post("two")
        client.post("three")
    assert [next(stream).seq, next(stream).seq] == [2, 3]
    stream.close()


# --- task.wait -----------------------------------------------------------------------


def test_wait_returns_an_existing_match_at_once(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        client.post("not this", kind="note")
        bug = client.post("Parser CRASH on empty input", kind="bug", tags=["parser"]).task
        got = client.wait(timeout_s=30, kind="bug", tag="parser", title_contains="crash")
        assert got.task == bug and got.seq == 2


def test_title_contains_folds_case_the_same_for_stored_and_live_tasks(
    daemon: DaemonProcess,
) -> None:
    with daemon.client() as client:
        stored = client.post("ÉCRAN noir au démarrage").task
        level = client.wait(timeout_s=5, title_contains="écran")
        assert level.task is not None and level.task.id == stored.id
        live_seq = client.server_info().last_seq
        live = client.post("Écran noir encore").task
        edge = client.wait(timeout_s=5, title_contains="ÉCRAN", after_seq=live_seq)
        assert edge.task is not None and edge.task.id == live.id


def test_wait_blocks_until_another_process_posts(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        client.post("noise", kind="note")
        outcome: dict[str, object] = {}

        def poster() -> None:
            time.sleep(0.3)
            outcome["ids"] = race("poster.py", daemon.socket_path, [["other", "1", "bug"]])

        thread = threading.Thread(target=poster)
        thread.start()
        got = client.wait(timeout_s=30, kind="bug")
        thread.join()
    assert got.task is not None and got.task.id == outcome["ids"][0][0]  # type: ignore[index]
    assert got.seq == 2


def test_edge_triggered_wait_ignores_a_stale_match(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        stale = client.post("old bug", kind="bug").task
        now = client.server_info().last_seq
        assert client.wait(timeout_s=0.2, kind="bug", after_seq=now).task is None
        fresh = client.post("new bug", kind="bug").task
        got = client.wait(timeout_s=5, kind="bug", after_seq=now)
        assert got.task is not None and got.task.id == fresh.id and got.task.id != stale.id


def test_timed_out_wait_returns_a_seq_to_chain_from(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        client.post("a")
        timed_out = client.wait(timeout_s=0.1, kind="bug")
        assert timed_out.task is None and timed_out.seq == 1
        # Something matching lands between two waits: the chained wait still sees it.
        bug = client.post("b", kind="bug").task
        chained = client.wait(timeout_s=5, kind="bug", after_seq=timed_out.seq)
        assert chained.task is not None and chained.task.id == bug.id and chained.seq == 2
        # With after_seq the task is as of the event: a later change does not leak in.
        client.claim(bug.id, "x")
        as_of_event = client.wait(timeout_s=5, kind="bug", after_seq=timed_out.seq)
        assert as_of_event.task is not None and as_of_event.task.state == "pending"
        after_claim = client.wait(timeout_s=5, kind="bug", state="claimed", after_seq=chained.seq)
        assert after_claim.task is not None and after_claim.seq == 3


async def test_a_thousand_waiters_only_the_matching_ones_wake(daemon: DaemonProcess) -> None:
    woken: list[tuple[str, int]] = []
    async with trio.open_nursery() as nursery:
        clients = []
        for _ in range(4):
            clients.append(await nursery.start(_client_holder, daemon))

        async def waiter(client: AsyncClient, kind: str, index: int) -> None:
            result = await client.wait(timeout_s=60, kind=kind, project="/repo", after_seq=0)
            woken.append((kind, index))
            assert result.task is not None and result.task.kind == kind

        for index in range(1000):
            kind = "bug" if index % 2 else "note"
            nursery.start_soon(waiter, clients[index % 4], kind, index)
        with trio.fail_after(20):
            while (await clients[0].server_info()) and await _waiter_count(clients[0]) < 1000:
                await trio.sleep(0.05)
        await clients[0].post("wake the bug waiters", kind="bug", project="/repo")
        with trio.fail_after(20):
            while len(woken) < 500:
                await trio.sleep(0.01)
        await trio.sleep(0.2)
        assert len(woken) == 500 and {kind for kind, _ in woken} == {"bug"}
        assert await _waiter_count(clients[0]) == 500  # the notes sleep on
        await clients[1].post("now the notes", kind="note", project="/repo")
        with trio.fail_after(20):
            while len(woken) < 1000:
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()


async def _client_holder(
    daemon: DaemonProcess, task_status: trio.TaskStatus[AsyncClient] = trio.TASK_STATUS_IGNORED
) -> None:
    async with AsyncClient.connect(daemon.socket_path) as client:
        task_status.started(client)
        await trio.sleep_forever()


async def _waiter_count(client: AsyncClient) -> int:
    import msgspec

    raw = await client.call_raw("server.info")
    return int(msgspec.json.decode(raw.result)["waiters"])


def test_events_with_no_task_reach_only_a_caller_that_names_them(daemon: DaemonProcess) -> None:
    """1.2's slot, message and landing events are opt-in: a 1.1 subscriber, which asks
    for no types and decodes every event as a task event, never meets one."""
    with Client(daemon.socket_path, agent="a", project="/optin") as client:
        plain = client.subscribe(after_seq=0, project="/optin", reconnect=False)
        named = client.subscribe(
            after_seq=0, project="/optin", types=["slot.granted", "message.sent", "task.posted"],
            reconnect=False,
        )  # fmt: skip
        client.acquire_slot("db")
        client.send_message("hello", to="b")
        client.post("after")
        try:
            seen_plain = [next(iter(plain)).type]
            seen_named = [next(iter(named)).type for _ in range(3)]
        finally:
            plain.close()
            named.close()
        since = client.events_since(after_seq=0, project="/optin").events
    assert seen_plain == ["task.posted"]  # the first event a plain subscriber gets
    assert seen_named == ["slot.granted", "message.sent", "task.posted"]
    assert [e.type for e in since] == ["task.posted"]

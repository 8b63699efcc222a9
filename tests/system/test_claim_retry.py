"""A claim whose answer is lost in a crash strands nothing (issue 44 item 7).

The daemon is a real `coordd serve`, killed with SIGKILL and started again on
the same socket and file. The window the issue saw (a group commit made
durable at the instant of the kill, before its replies left) is too narrow to
hit on purpose by timing, so each test makes it happen: a client sends its
claim, the test waits until the claim's `task.claimed` event is committed,
kills the daemon -9 and starts it again, and the client then finds its
connection gone with no answer read, exactly as a client of the killed daemon
does. The clients must ask again with the claim's key and get that task back;
a client that asks anew gets another one, and the first stays held by nobody
who knows it, which is what these tests catch.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from coordd_apps.landing.calls import retrying
from coordd_client import Client, methods
from coordd_client.aio import AsyncClient
from coordd_client.rpc import Response
from coordd_wire import wire
from coordd_wire.errors import DaemonUnavailable
from coordd_wire.server_info import ServerInfo
from support import DaemonProcess, coord

#: Seconds a worker keeps asking while the daemon is away (a restart on a busy machine).
AWAY_S = 120.0
TASKS = 200
WORKERS = 16


def crash_once_claimed(daemon: DaemonProcess, agent: str, after_seq: int) -> int:
    """Wait until `agent`'s claim is committed, then kill the daemon -9 and start it again.

    Returns the claimed task's id. The subscription starts after `after_seq`,
    taken before the claim was sent, so its event cannot be missed.
    """
    with Client(daemon.socket_path) as watcher:
        stream = watcher.subscribe(after_seq=after_seq, types=["task.claimed"], reconnect=False)
        with stream:
            task_id = next(e.task_id for e in stream if e.agent == agent)
    assert task_id is not None
    daemon.kill()
    daemon.start()
    return task_id


class LosesAClaimAnswer(Client):
    """A blocking client whose next `task.claim_next` answer is lost with the daemon.

    Armed with `crash` (`crash_once_claimed` bound to a daemon and agent), it
    sends that one claim, lets `crash` make it durable and kill the daemon,
    and reports the connection lost, never reading the answer.
    """

    def __init__(self, socket_path: Path) -> None:
        super().__init__(socket_path)
        self.crash: Callable[[int], int] | None = None
        #: The task the lost answer named, once it was lost.
        self.lost_task: int | None = None

    def call_raw(
        self, method: str, params: Any = None, *, timeout_s: float | None = None
    ) -> Response:
        crash = self.crash if method == "task.claim_next" else None
        if crash is None:
            return super().call_raw(method, params, timeout_s=timeout_s)
        self.crash = None
        after_seq = self.server_info().last_seq
        self.send_request(method, params)
        self.lost_task = crash(after_seq)
        self.close()
        raise DaemonUnavailable("the daemon closed the connection", outcome="unknown")


def test_a_claim_next_whose_answer_was_lost_returns_the_task_it_won(
    workdir: Path,
) -> None:
    daemon = DaemonProcess(workdir, args=("--log-level", "warning")).start()
    try:
        with daemon.client() as setup:
            ids = [setup.post(f"work {n}").task.id for n in range(3)]
        client = LosesAClaimAnswer(daemon.socket_path)
        with client:
            client.crash = lambda seq: crash_once_claimed(daemon, "w", seq)
            got = client.claim_next("w").task
        assert client.lost_task == ids[0]
        assert got is not None and got.id == ids[0] and got.claimed_by == "w"
        with daemon.client() as check:
            claimed = check.list_tasks(state="claimed").tasks
        assert [(t.id, t.claimed_by, t.fence) for t in claimed] == [(ids[0], "w", 1)]
    finally:
        daemon.ensure_dead()


class AsyncLosesAClaimAnswer(AsyncClient):
    """`LosesAClaimAnswer` for the trio client: the crash runs in a worker thread."""

    crash: Callable[[int], int] | None = None
    lost_task: int | None = None

    async def call_raw(self, method: str, params: dict[str, Any] | None = None) -> Response:
        crash = self.crash if method == "task.claim_next" else None
        if crash is None:
            return await super().call_raw(method, params)
        self.crash = None
        after_seq = (await self.server_info()).last_seq
        async with trio.open_nursery() as nursery:
            # Sent for real; its answer is never read, its connection dies with the daemon.
            nursery.start_soon(self._send_and_forget, method, params)
            self.lost_task = await trio.to_thread.run_sync(crash, after_seq)
        raise DaemonUnavailable("the daemon closed the connection", outcome="unknown")

    async def _send_and_forget(self, method: str, params: dict[str, Any] | None) -> None:
        try:
            await super().call_raw(method, params)
        except DaemonUnavailable:
            pass


def test_the_trio_client_asks_again_on_a_new_connection(workdir: Path) -> None:
    daemon = DaemonProcess(workdir, args=("--log-level", "warning")).start()

    async def main() -> wire.Task | None:
        async with trio.open_nursery() as nursery:
            client = await AsyncLosesAClaimAnswer.open(nursery, daemon.socket_path)
            assert isinstance(client, AsyncLosesAClaimAnswer)
            client.crash = lambda seq: crash_once_claimed(daemon, "w", seq)
            try:
                return (await client.claim_next("w")).task
            finally:
                await client.aclose()
                assert client.lost_task is not None

    try:
        with daemon.client() as setup:
            ids = [setup.post(f"work {n}").task.id for n in range(3)]
        got = trio.run(main)
        assert got is not None and got.id == ids[0] and got.claimed_by == "w"
        with daemon.client() as check:
            claimed = check.list_tasks(state="claimed").tasks
        assert [(t.id, t.claimed_by) for t in claimed] == [(ids[0], "w")]
    finally:
        daemon.ensure_dead()


def test_the_mcp_claim_tools_link_asks_again_on_a_new_connection(workdir: Path) -> None:
    """The MCP tools' calls go through `DaemonLink`, which replaces a broken connection."""
    pytest.importorskip("mcp")
    from coordd_apps.mcp_bridge.link import DaemonLink
    from coordd_client.discovery import SocketRoute

    daemon = DaemonProcess(workdir, args=("--log-level", "warning")).start()
    losing: list[AsyncLosesAClaimAnswer] = []

    class LinkLosingAClaim(DaemonLink):
        armed = True

        async def _open_at(self, path: Path) -> AsyncClient:
            self.socket_path = path
            client = await AsyncLosesAClaimAnswer.open(self._nursery, path)
            assert isinstance(client, AsyncLosesAClaimAnswer)
            if self.armed:
                self.armed = False
                client.crash = lambda seq: crash_once_claimed(daemon, "w", seq)
                losing.append(client)
            return client

    async def main() -> dict[str, Any]:
        async with trio.open_nursery() as nursery:
            route = SocketRoute(daemon.socket_path, explicit=True)
            link = LinkLosingAClaim(nursery, route, autostart=False)
            try:
                return await link.request(methods.claim_next("w"))
            finally:
                await link.aclose()

    try:
        with daemon.client() as setup:
            ids = [setup.post(f"work {n}").task.id for n in range(3)]
        got = trio.run(main)
        assert [c.lost_task for c in losing] == [ids[0]] and got["task"]["id"] == ids[0]
        with daemon.client() as check:
            claimed = check.list_tasks(state="claimed").tasks
        assert [(t.id, t.claimed_by) for t in claimed] == [(ids[0], "w")]
    finally:
        daemon.ensure_dead()


def test_coord_next_and_claim_with_a_request_key_learn_what_it_won(daemon: DaemonProcess) -> None:
    """What the error of a claim that gave up tells a user to run: the same key answers
    with the task that claim won, not a second one."""
    with daemon.client() as setup:
        ids = [setup.post(f"work {n}").task.id for n in range(2)]
    key = ["--request-key", "a" * 32, "--agent", "w", "--project", "default", "--json"]
    runs = [coord("next", *key, socket=daemon.socket_path) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs
    answers = [msgspec.json.decode(r.stdout, type=wire.MaybeTaskResult).task for r in runs]
    assert [t.id for t in answers if t is not None] == [ids[0], ids[0]]
    again = coord("claim", str(ids[0]), *key, socket=daemon.socket_path)
    assert msgspec.json.decode(again.stdout, type=wire.ClaimResult).won, again
    with daemon.client() as check:
        assert [t.id for t in check.list_tasks(state="claimed").tasks] == [ids[0]]


class Drain:
    """What the workers of one drain share: who was told it won what, and the crash."""

    def __init__(self, daemon: DaemonProcess) -> None:
        self.daemon = daemon
        self.lock = threading.Lock()
        self.done = 0
        self.told: dict[str, list[int]] = {}
        #: Set once the daemon was killed and started again.
        self.crashed = threading.Event()
        self.failures: list[BaseException] = []

    def finished_one(self) -> int:
        with self.lock:
            self.done += 1
            return self.done


def drain_worker(drain: Drain, agent: str) -> None:
    """Claim, complete, repeat until nothing is left; as a real worker does, a call that
    fails because the daemon is away is made again (`retrying`).

    Worker 0 loses the answer of its first claim after a quarter of the tasks are
    done, with the daemon killed -9 the moment that claim is durable. The others
    keep working through the kill; past half the tasks they wait for it, so that
    it always falls mid-drain.
    """
    told = drain.told.setdefault(agent, [])
    # Connected by its first call, inside `retrying`: on a busy machine a worker's
    # thread may first run while the daemon is down for the kill (seen in CI).
    client = LosesAClaimAnswer(drain.daemon.socket_path)
    try:
        while True:
            if agent == "w00" and not drain.crashed.is_set() and drain.done >= TASKS // 4:
                client.crash = lambda seq: _crash(drain, agent, seq)
            elif agent != "w00" and drain.done >= TASKS // 2:
                assert drain.crashed.wait(AWAY_S), "the crash never came"
            task = retrying("claim_next", lambda: client.claim_next(agent).task, AWAY_S)
            if task is None:
                return
            told.append(task.id)
            complete = partial(client.complete, task.id, agent, fence=task.fence)
            retrying("complete", complete, AWAY_S)
            drain.finished_one()
    except BaseException as exc:
        drain.failures.append(exc)
        drain.crashed.set()  # nobody waits for a crash that will not come
        raise
    finally:
        client.close()


def _crash(drain: Drain, agent: str, after_seq: int) -> int:
    task_id = crash_once_claimed(drain.daemon, agent, after_seq)
    drain.crashed.set()
    return task_id


def test_sixteen_workers_drain_two_hundred_tasks_through_a_kill_9(workdir: Path) -> None:
    """Every task done, each by the one worker told it won it; none held by a worker
    that does not know it; one `task.claimed` per task (no claim made twice)."""
    daemon = DaemonProcess(workdir, args=("--log-level", "warning")).start()
    try:
        with daemon.client() as setup:
            ids = {setup.post(f"work {n}").task.id for n in range(TASKS)}
        drain = Drain(daemon)
        agents = [f"w{n:02d}" for n in range(WORKERS)]
        threads = [threading.Thread(target=drain_worker, args=(drain, a)) for a in agents]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not drain.failures, drain.failures
        assert drain.crashed.is_set()
        with daemon.client() as check:
            tasks = check.list_tasks(limit=1000).tasks
            claims = check.events_since(types=["task.claimed"], limit=10000).events
    finally:
        daemon.ensure_dead()
    held_unknowingly = [(t.id, t.claimed_by) for t in tasks if t.state == "claimed"]
    assert held_unknowingly == []
    assert {t.id for t in tasks} == ids and {t.state for t in tasks} == {"done"}
    told = [(task_id, agent) for agent, won in drain.told.items() for task_id in won]
    assert sorted(task_id for task_id, _ in told) == sorted(ids)  # each told to one worker
    holders = {t.id: t.claimed_by for t in tasks}
    assert all(holders[task_id] == agent for task_id, agent in told)
    assert Counter(e.task_id for e in claims) == Counter(dict.fromkeys(ids, 1))


class OldDaemonClient(Client):
    """A client facing a daemon from before section 5a: its `server.info` names no
    `claim_request_key`, and every other call loses its answer."""

    def __init__(self) -> None:
        super().__init__("/nonexistent/s.sock")
        self.sent: list[tuple[str, Any]] = []

    def call_raw(
        self, method: str, params: Any = None, *, timeout_s: float | None = None
    ) -> Response:
        self.sent.append((method, params))
        if method == "server.info":
            info = ServerInfo(
                version="0.9", protocol=1, pid=1, db_path="/x", started_at="", counts={},
                last_seq=0, features=["deps"],
            )  # fmt: skip
            return Response(id=1, result=msgspec.Raw(msgspec.json.encode(info)))
        raise DaemonUnavailable("the daemon closed the connection", outcome="unknown")


@pytest.mark.parametrize("method", ["task.claim", "task.claim_next"])
def test_a_daemon_without_the_feature_gets_no_key_and_no_repeat(method: str) -> None:
    """An older daemon refuses params it does not know, and would answer a repeat with a
    second claim: the clients key (and repeat) a claim only for a daemon that names
    `claim_request_key`."""
    client = OldDaemonClient()
    with pytest.raises(DaemonUnavailable):
        if method == "task.claim":
            client.claim(1, "w")
        else:
            client.claim_next("w")
    assert [m for m, _ in client.sent] == ["server.info", method]
    assert client.sent[1][1].get("request_key") is None  # None is not sent


class LosesAReleaseAnswer(LosesAClaimAnswer):
    """`LosesAClaimAnswer` for `task.release`: the release is committed, the daemon killed
    and started again, and another agent claims the task before the client asks again."""

    def call_raw(
        self, method: str, params: Any = None, *, timeout_s: float | None = None
    ) -> Response:
        crash = self.crash if method == "task.release" else None
        if crash is None:
            return super().call_raw(method, params, timeout_s=timeout_s)
        self.crash = None
        after_seq = self.server_info().last_seq
        self.send_request(method, params)
        crash(after_seq)
        self.close()
        raise DaemonUnavailable("the daemon closed the connection", outcome="unknown")


def test_a_release_whose_answer_was_lost_is_asked_again_as_a_repeat(workdir: Path) -> None:
    """The release went through; by the time the client asks again another agent holds
    the task. Asked again as a `repeat` (docs/PROTOCOL-1.2.md section 5b), the client
    hears the task as it stands, not -32003 for a release it made."""
    daemon = DaemonProcess(workdir, args=("--log-level", "warning")).start()

    def crash_once_released(after_seq: int) -> int:
        with Client(daemon.socket_path) as watcher:
            stream = watcher.subscribe(
                after_seq=after_seq, types=["task.released"], reconnect=False
            )
            with stream:
                task_id = next(e.task_id for e in stream if e.agent == "w")
        assert task_id is not None
        daemon.kill()
        daemon.start()
        with daemon.client() as other:
            assert other.claim(task_id, "b").won
        return task_id

    try:
        with daemon.client() as setup:
            task_id = setup.post("work").task.id
        client = LosesAReleaseAnswer(daemon.socket_path)
        with client:
            fence = client.claim(task_id, "w").task.fence
            client.crash = crash_once_released
            task = client.release(task_id, "w", fence=fence).task
        assert (task.id, task.state, task.claimed_by) == (task_id, "claimed", "b")
    finally:
        daemon.ensure_dead()

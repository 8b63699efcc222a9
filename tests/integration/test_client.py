"""The thin client against the real daemon: pipelining, typed results, errors, paths."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
import trio

from coordd.daemon import Daemon
from coordd_client import (
    Client,
    Conflict,
    DaemonUnavailable,
    InvalidParams,
    NotFound,
    Task,
    methods,
)
from coordd_client.aio import NOTIFICATIONS_QUEUED, AsyncClient
from coordd_client.gather import gather, value
from coordd_client.rpc import Response
from coordd_wire.paths import default_socket_path

pytestmark = pytest.mark.both_backends


async def test_many_concurrent_calls_pipeline_on_one_connection(aclient: AsyncClient) -> None:
    results: dict[int, Task] = {}

    async def post(n: int) -> None:
        results[n] = (await aclient.post(f"task {n}", priority=n % 7)).task

    async with trio.open_nursery() as nursery:
        for n in range(300):
            nursery.start_soon(post, n)
    assert {task.title for task in results.values()} == {f"task {n}" for n in range(300)}
    assert all(results[n].title == f"task {n}" for n in results)  # every reply matched its call
    claims: list[bool] = []

    async def claim(task_id: int, agent: str) -> None:
        claims.append((await aclient.claim(task_id, agent)).won)

    async with trio.open_nursery() as nursery:
        for task in results.values():
            for agent in ("a", "b"):
                nursery.start_soon(claim, task.id, agent)
    assert claims.count(True) == 300 and claims.count(False) == 300


async def test_errors_become_typed_exceptions(aclient: AsyncClient) -> None:
    with pytest.raises(NotFound):
        await aclient.get(12345)
    task = (await aclient.post("x")).task
    await aclient.cancel(task.id)
    with pytest.raises(Conflict) as conflict:
        await aclient.cancel(task.id)
    assert conflict.value.data["task"]["state"] == "cancelled"
    with pytest.raises(InvalidParams) as invalid:
        await aclient.post("x", priority=10_000)
    assert invalid.value.data["field"] == "priority"


async def test_blocking_client_round_trip(inproc: Daemon) -> None:
    def use_blocking_client() -> tuple[bool, str]:
        with Client(inproc.config.socket_path) as client:
            task = client.post("from a thread", kind="bug").task
            won = client.claim(task.id, "t")
            return won.won, client.get(task.id).task.claimed_by or ""

    assert await trio.to_thread.run_sync(use_blocking_client) == (True, "t")


async def test_gathered_calls_answer_in_the_order_asked_in_one_round_trip(
    inproc: Daemon,
) -> None:
    """`gather` (issue 46): independent calls sent together; each answer is its own
    call's, in the order asked, a refusal returned in its place, not raised."""

    def gathered() -> list[object]:
        with Client(inproc.config.socket_path, project="/p") as client:
            posted = [client.post(f"task {n}").task for n in range(3)]
            client.claim(posted[1].id, "ada")
            answers = gather(
                client,
                [
                    methods.get(posted[2].id),
                    methods.get(999_999),
                    methods.list_tasks(state="claimed"),
                    methods.server_info(),
                    methods.get(posted[0].id),
                ],
            )
            assert value(answers[0]).task.title == "task 2"
            assert isinstance(answers[1], NotFound)
            with pytest.raises(NotFound):
                value(answers[1])
            assert [t.id for t in value(answers[2]).tasks] == [posted[1].id]
            assert value(answers[3]).last_seq >= 4
            assert value(answers[4]).task.title == "task 0"
            # The connection is in step after it: the next call gets its own answer.
            return [client.get(posted[1].id).task.claimed_by]

    assert await trio.to_thread.run_sync(gathered) == ["ada"]


def test_unavailable_daemon_is_a_clear_exception(tmp_path: Path) -> None:
    with pytest.raises(DaemonUnavailable) as info:
        Client(tmp_path / "nobody.sock").connect()
    assert "no coordd answers" in info.value.message


def test_socket_path_resolution_follows_protocol_section_1() -> None:
    env = {"COORDD_SOCKET": "/e/s.sock", "XDG_RUNTIME_DIR": "/run/user/7", "TMPDIR": "/t"}
    assert default_socket_path("/x.sock", env) == Path("/x.sock")
    assert default_socket_path(None, env) == Path("/e/s.sock")
    del env["COORDD_SOCKET"]
    assert default_socket_path(None, env) == Path("/run/user/7/coordd/coordd.sock")
    del env["XDG_RUNTIME_DIR"]
    import os

    assert default_socket_path(None, env) == Path(f"/t/coordd-{os.getuid()}/coordd.sock")


async def test_both_clients_check_capabilities_and_apply_defaults(inproc: Daemon) -> None:
    path = inproc.config.socket_path
    async with AsyncClient.connect(path, agent="trio-tab", project="/p") as client:
        assert await client.supports("deps") and await client.supports("task_history")
        assert await client.supports("reservations")
        assert not await client.supports("no-such-feature")
        task = (await client.post("from trio")).task
        assert (task.created_by, task.project) == ("trio-tab", "/p")
        assert (await client.claim(task.id)).won

    def blocking_checks() -> tuple[bool, bool]:
        with Client(path) as blocking:
            return blocking.supports("assignee"), blocking.supports("no-such-feature")

    # The blocking client in a thread: the daemon runs on this test's trio thread.
    assert await trio.to_thread.run_sync(blocking_checks) == (True, False)


async def test_a_consumer_that_falls_behind_sees_its_notifications_end_not_skip(
    inproc: Daemon,
) -> None:
    """The client's reader keeps the socket drained, so the daemon never sees a slow
    consumer; the client's own queue is bounded. Past it, the stream ends (after what
    was queued), and resubscribing after the last seq handled gets the rest: every
    event once, in order, none skipped silently (it used to drop them and carry on)."""
    posts = NOTIFICATIONS_QUEUED + 100
    async with (
        AsyncClient.connect(inproc.config.socket_path) as follower,
        AsyncClient.connect(inproc.config.socket_path) as poster,
    ):
        await follower.call_raw("events.subscribe", {"after_seq": 0})
        for n in range(posts):
            await poster.post(f"task {n}")
        with trio.fail_after(60):
            while not follower.notifications_overflowed:
                await trio.sleep(0.01)
        seqs = [_event_seq(note) async for note in follower.notifications if note.method == "event"]
    assert len(seqs) == NOTIFICATIONS_QUEUED
    async with AsyncClient.connect(inproc.config.socket_path) as again:
        await again.call_raw("events.subscribe", {"after_seq": seqs[-1]})
        with trio.fail_after(60):
            async for note in again.notifications:
                if note.method == "event":
                    seqs.append(_event_seq(note))
                if len(seqs) == posts:
                    break
    assert seqs == list(range(seqs[0], seqs[0] + posts))


def _event_seq(note: Response) -> int:
    params = msgspec.json.decode(note.params)
    return int(params["event"]["seq"])

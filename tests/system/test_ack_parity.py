"""Acknowledgements are never work (issue 47 item 2), on every surface, for real.

The CLI (`coord done --ack`, `coord post -k ack`), the MCP tools as the MCP SDK's own
client drives `coord mcp` (`complete_task` with `then_post`, `post_task` with kind
ack) and the TypeScript client (`ackOf`, `post`, built and run under node) post the
same ack to one real daemon: kind ack, state done, tagged `re:<id>` and the task's
tags, in the task's project. None of them is ready work afterwards: `task.claim_next`
hands out nothing and no `ready` list shows one. Before the shared rule
(`coordd_client.acks`) the MCP `complete_task` posted its `then_post` pending, as
kind task unless told, and `claim_next` handed the announcement out as work.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from mcp import Client as MCPClient
from test_mcp import PROJECT, call, headline, server, session

from coordd_client import Client
from coordd_wire.errors import InvalidParams
from support import DaemonProcess, RawConnection, coord

TS = Path(__file__).resolve().parents[2] / "clients" / "ts"
ACKER = TS / "build-test" / "test" / "workers" / "acker.js"
TAGS = ["parser", "ci"]


@pytest.fixture(scope="module")
def ts_acker() -> Iterator[Path]:
    """The TS client and its test worker, compiled from this tree's sources (not an
    older build): the parity is with the code under test."""
    npm = shutil.which("npm")
    assert npm is not None, "the TypeScript client's tests need node and npm"
    built = subprocess.run(
        [npm, "run", "--silent", "build:test"],
        cwd=TS,
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    yield ACKER


def the_ack(task: dict[str, Any], done: int) -> tuple[Any, ...]:
    """What every surface's ack must share, its link to the task it announces (`re:<id>`)
    written as `re:ID`."""
    tags = ["re:ID" if tag == f"re:{done}" else tag for tag in task["tags"]]
    return (task["kind"], task["state"], task["project"], task["claimed_by"], tags)


ACK = ("ack", "done", PROJECT, None, ["re:ID", *TAGS])


async def test_cli_mcp_and_ts_post_the_same_ack_and_none_is_work(
    daemon: DaemonProcess, ts_acker: Path
) -> None:
    s = daemon.socket_path
    with Client(s, agent="poster", project=PROJECT) as board:
        ids = [board.post(f"fix {n}", tags=TAGS).task.id for n in range(3)]
    cli_id, mcp_id, ts_id = ids

    # The CLI: claim, then done with --ack; and an ack posted by its kind alone.
    env = {"COORD_AGENT": "cli-agent", "COORD_PROJECT": PROJECT}
    assert coord("claim", str(cli_id), socket=s, env=env).returncode == 0
    done = coord("done", str(cli_id), "--ack", "landed", "--json", socket=s, env=env)
    assert done.returncode == 0, done.stderr
    cli_ack = json.loads(done.stdout)["posted"]
    posted = coord("post", "landed", "-k", "ack", "--json", socket=s, env=env)
    assert posted.returncode == 0, posted.stderr
    cli_post = json.loads(posted.stdout)["task"]

    # The MCP tools, driven by the SDK's own client: then_post gives only a title.
    async with MCPClient(server(s, CLAUDE_CODE_SESSION_ID=session(7))) as c:
        claim = await call(c, "claim_task", id=mcp_id)
        finished = await call(
            c,
            "complete_task",
            id=mcp_id,
            fence=claim["task"]["fence"],
            then_post={"title": "landed"},
        )
        mcp_ack = finished["posted"]
        mcp_post = (await call(c, "post_task", title="landed", kind="ack"))["task"]

    # The TypeScript client, as a plugin calls it.
    argv = ["node", str(ts_acker), str(s), "ts-agent", PROJECT, str(ts_id), "landed"]
    ran = await trio.run_process(argv, capture_stdout=True, capture_stderr=True, check=False)
    assert ran.returncode == 0, ran.stderr.decode()
    ts = json.loads(ran.stdout)
    ts_ack, ts_post = ts["completed"], ts["posted"]

    assert the_ack(cli_ack, cli_id) == the_ack(mcp_ack, mcp_id) == the_ack(ts_ack, ts_id) == ACK
    assert {cli_ack["title"], mcp_ack["title"], ts_ack["title"]} == {"landed"}
    by_kind = [
        (t["kind"], t["state"], t["project"], t["claimed_by"])
        for t in (cli_post, mcp_post, ts_post)
    ]
    assert by_kind == [("ack", "done", PROJECT, None)] * 3

    # Ready means actionable: six acks on the board, none of them claimable or ready.
    with Client(s, agent="worker", project=PROJECT) as worker:
        assert worker.claim_next().task is None
        assert worker.list_tasks(ready=True).tasks == []
        acks = worker.list_tasks(kind="ack").tasks
        assert len(acks) == 6 and {t.state for t in acks} == {"done"}
    async with MCPClient(server(s, CLAUDE_CODE_SESSION_ID=session(8))) as c:
        board_view = await call(c, "board")
        assert (board_view["ready"], board_view["ready_total"]) == ([], 0)
    listed = coord("ls", "--json", socket=s, env=env)
    assert listed.returncode == 0 and json.loads(listed.stdout)["tasks"] == []


async def test_mcp_complete_then_post_leaves_no_pending_task_for_claim_next(
    daemon: DaemonProcess,
) -> None:
    """The regression of issue 47 item 2: a then_post of a title alone, or of kind ack,
    was posted pending, and the next claim_next handed the announcement out."""
    s = daemon.socket_path
    with Client(s, agent="poster", project=PROJECT) as board:
        first, second = (board.post(f"fix {n}").task.id for n in range(2))
    async with MCPClient(server(s, CLAUDE_CODE_SESSION_ID=session(9))) as c:
        for task_id, follow_up in (
            (first, {"title": "done"}),
            (second, {"title": "done", "kind": "ack"}),
        ):
            fence = (await call(c, "claim_task", id=task_id))["task"]["fence"]
            done = await call(c, "complete_task", id=task_id, fence=fence, then_post=follow_up)
            assert (done["posted"]["kind"], done["posted"]["state"]) == ("ack", "done")
        assert (await call(c, "claim_next"))["task"] is None
        # Follow-up work stays possible, by naming its kind: that one is work.
        third = (await call(c, "post_task", title="fix 3"))["task"]["id"]
        fence = (await call(c, "claim_task", id=third))["task"]["fence"]
        review = {"title": "review the fix", "kind": "task"}
        done = await call(c, "complete_task", id=third, fence=fence, then_post=review)
        assert (done["posted"]["kind"], done["posted"]["state"]) == ("task", "pending")
        assert (await call(c, "claim_next"))["task"]["id"] == done["posted"]["id"]


async def test_an_ack_asked_for_as_pending_work_is_refused_by_the_clients(
    daemon: DaemonProcess,
) -> None:
    s = daemon.socket_path
    async with MCPClient(server(s, CLAUDE_CODE_SESSION_ID=session(10))) as c:
        refused = await c.call_tool("post_task", {"title": "x", "kind": "ack", "state": "pending"})
        assert refused.is_error and "never work" in headline(refused)
    with Client(s, agent="a", project=PROJECT) as client:
        with pytest.raises(InvalidParams, match="never work"):
            client.post("x", kind="ack", state="pending")
        assert client.list_tasks().tasks == []


def test_the_daemon_keeps_kind_opaque_for_a_1_1_client(daemon: DaemonProcess) -> None:
    """The rule is the clients' (docs/CONFORMANCE.md): the base contract lets a 1.1 client
    post kind ack pending, and the daemon takes it, and hands it out, as it always did."""
    raw = RawConnection(daemon.socket_path)
    try:
        posted = raw.call("task.post", {"title": "old ack", "kind": "ack", "project": PROJECT})
        assert posted["result"]["task"]["state"] == "pending"
        claimed = raw.call("task.claim_next", {"agent": "old", "project": PROJECT}, request_id=2)
        assert claimed["result"]["task"]["id"] == posted["result"]["task"]["id"]
    finally:
        raw.close()

"""`coord mcp` driven by the MCP SDK's own client over stdio, as a host drives it,
against a real daemon: every tool in both protocol eras, races between servers,
identity shared with the CLI, waits, restarts and bad input."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
import trio
from mcp import Client as MCPClient
from mcp.client.stdio import StdioServerParameters
from mcp.types import CallToolResult

from coordd_apps.mcp_bridge.results import error_of
from coordd_client import Client
from support import COORD, DaemonProcess, coord, coord_env, coord_without, git_repo

ERAS = ["legacy", "2026-07-28"]  # the 2025-11-25 handshake most hosts speak, and the new one
PROJECT = "/mcp-repo"
TOOLS = {
    "board", "list_tasks", "get_task", "post_task", "claim_task", "claim_next", "renew_task",
    "release_task", "complete_task", "fail_task", "cancel_task", "reopen_task",
    "wait_for_task", "heartbeat", "whoami", "assign_task", "reserve_paths", "release_paths",
    "check_paths", "list_reservations",
    # issue 34
    "send_message", "read_messages", "request_release", "answer_request",
    "acquire_slot", "release_slot", "lease_port", "land", "landing_queue",  # issue 35
    "task_cost",  # issue 48
}  # fmt: skip


@pytest.fixture
def repo(workdir: Path) -> Path:
    return git_repo(workdir / "repo")


def session(n: int) -> str:
    """A Claude Code session id; `claude-` + its first 12 hex digits names the agent."""
    return f"{n:08x}-4380-4f6e-9a1b-0123456789ab"


def server(socket: Path, *, project: str | None = PROJECT, **env: str) -> StdioServerParameters:
    environ = coord_env(socket, autostart=False, **env)
    if project is not None:
        environ["COORD_PROJECT"] = project
    return StdioServerParameters(command=COORD, args=["mcp"], env=environ)


def doc(result: CallToolResult) -> dict[str, Any]:
    """The structured result, checked to be the same JSON as the text."""
    assert result.structured_content is not None, result
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
    structured: dict[str, Any] = result.structured_content
    return structured


def headline(result: CallToolResult) -> str:
    """An error's first text block: the line the model reads."""
    return result.content[0].text  # type: ignore[union-attr]


def text(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if hasattr(block, "text"))


async def call(client: MCPClient, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text(result)
    return doc(result)


@pytest.mark.parametrize("era", ERAS)
async def test_every_tool_in_both_protocol_eras(daemon: DaemonProcess, era: str) -> None:
    params = server(daemon.socket_path, CLAUDE_CODE_SESSION_ID=session(1))
    async with MCPClient(params, mode=era) as c:
        listed = {tool.name: tool for tool in (await c.list_tools()).tools}
        assert set(listed) == TOOLS
        assert listed["board"].annotations.read_only_hint  # type: ignore[union-attr]
        assert listed["cancel_task"].annotations.destructive_hint  # type: ignore[union-attr]
        claim_annotations = listed["claim_task"].annotations
        assert claim_annotations is not None and claim_annotations.idempotent_hint
        assert not claim_annotations.destructive_hint
        assert all(tool.output_schema for tool in listed.values())
        assert "agent" not in listed["claim_task"].input_schema["properties"]

        me = await call(c, "whoami")
        assert me["agent"] == "claude-000000014380"
        assert (me["project"], me["project_source"]) == (PROJECT, "$COORD_PROJECT")
        agent = me["agent"]
        posted = (await call(c, "post_task", title="fix the parser", kind="bug", priority=5))[
            "task"
        ]
        assert (posted["created_by"], posted["project"]) == (agent, PROJECT)
        assert (await call(c, "get_task", id=posted["id"]))["task"]["title"] == "fix the parser"
        listed_tasks = await call(c, "list_tasks", state="pending")
        assert [t["id"] for t in listed_tasks["tasks"]] == [posted["id"]]
        claim = await call(c, "claim_task", id=posted["id"])
        assert claim["won"] and claim["task"]["claimed_by"] == agent
        fence = claim["task"]["fence"]
        assert (await call(c, "renew_task", id=posted["id"], fence=fence, lease_s=900))["task"]
        assert (await call(c, "heartbeat"))["renewed"] == 1
        board = await call(c, "board")
        assert [t["id"] for t in board["my_claims"]] == [posted["id"]]
        reserved = await call(c, "reserve_paths", patterns=["src/parser/**"], task_id=posted["id"])
        assert reserved["reservations"][0]["agent"] == agent
        mine = await call(c, "list_reservations", mine=True)
        assert [r["pattern"] for r in mine["reservations"]] == ["src/parser/**"]
        assert (await call(c, "check_paths", paths=["src/parser/x.py"]))["conflicts"] == []
        done = await call(
            c,
            "complete_task",
            id=posted["id"],
            fence=fence,
            result="fixed",
            then_post={"kind": "ack", "state": "done", "title": "parser fixed"},
        )
        assert done["task"]["state"] == "done"
        ack = done["posted"]
        assert (ack["created_by"], ack["project"], ack["kind"]) == (agent, PROJECT, "ack")
        assert (await call(c, "list_reservations"))["reservations"] == []  # ended with the task
        assert (await call(c, "claim_next"))["task"] is None
        second = (await call(c, "post_task", title="hand over"))["task"]
        claimed = (await call(c, "claim_next"))["task"]
        assert claimed["id"] == second["id"]
        handed = await call(
            c, "release_task", id=second["id"], fence=claimed["fence"], assignee="cursor-2"
        )
        assert (handed["task"]["state"], handed["task"]["assignee"]) == ("pending", "cursor-2")
        assert (await call(c, "assign_task", id=second["id"], assignee=None))["task"][
            "assignee"
        ] is None
        third = (await call(c, "claim_task", id=second["id"]))["task"]
        failed = await call(c, "fail_task", id=second["id"], fence=third["fence"], reason="no")
        assert failed["task"]["state"] == "failed"
        assert (await call(c, "reopen_task", id=second["id"]))["task"]["state"] == "pending"
        assert (await call(c, "cancel_task", id=second["id"]))["task"]["state"] == "cancelled"
        waited = await call(c, "wait_for_task", kind="nothing-like-this", timeout_s=0.2)
        assert waited["task"] is None and waited["seq"] > 0
        held = await call(c, "reserve_paths", patterns=["docs/**"])
        assert (await call(c, "release_paths", ids=[held["reservations"][0]["id"]]))[
            "released"
        ] == 1


async def test_protocol_errors_are_tool_errors_that_say_what_to_do(daemon: DaemonProcess) -> None:
    with Client(daemon.socket_path, agent="codex-3", project=PROJECT) as other:
        task = other.post("taken").task
        other.claim(task.id)
    async with MCPClient(server(daemon.socket_path, COORD_AGENT="me")) as c:
        lost = await c.call_tool("complete_task", {"id": task.id})
        assert lost.is_error
        assert text(lost).startswith("lease_lost: ") and "claim_next" in text(lost)
        # Errors carry no structured content: it would have to match the tool's
        # outputSchema (MCP spec), so the protocol error rides in a second text block.
        assert lost.structured_content is None
        assert (error_of(lost) or {})["kind"] == "lease_lost"
        missing = await c.call_tool("get_task", {"id": 999})
        assert missing.is_error and (error_of(missing) or {})["code"] == -32001
        malformed = await c.call_tool("claim_task", {"id": "twelve"})
        assert headline(malformed) == (
            "invalid_params: id must be a whole number; fix the argument named and call again"
        )
        assert (error_of(malformed) or {})["data"] == {"kind": "invalid_params", "field": "id"}
        typo = await c.call_tool("renew_task", {"id": task.id, "fense": 1})
        assert typo.is_error and "fense" in text(typo)
        out_of_range = await c.call_tool("wait_for_task", {"timeout_s": 3600})
        assert headline(out_of_range).startswith("invalid_params: timeout_s must be at most 50")
        empty = await c.call_tool("post_task", {"title": "", "priority": 5000})
        assert headline(empty).startswith(
            "invalid_params: priority must be at most 1000; title must not be empty;"
        )
        assert "pydantic" not in text(empty) and "http" not in text(empty)
        with Client(daemon.socket_path, agent="codex-3", project=PROJECT) as other:
            other.reserve(["src/**"])
        refused = await c.call_tool("reserve_paths", {"patterns": ["src/a.py"]})
        assert refused.is_error and "held by codex-3" in text(refused)
        assert (error_of(refused) or {})["data"]["conflicts"]
        # The error object the model also reads says the advice, not the daemon's words
        # for no surface: no quoted repr, no raw instant, no `wait_s` in backticks (found
        # in review, issue 47 item 4).
        said = (error_of(refused) or {})["message"]
        assert said == headline(refused).removeprefix("reserved: ")
        assert "'" not in said and "`wait_s`" not in said
        assert re.search(r"\d{4}-\d\d-\d\dT", said) is None


async def test_completing_a_done_task_again_says_nothing_of_it_was_recorded(
    daemon: DaemonProcess,
) -> None:
    """A completion is idempotent (PROTOCOL.md section 5): a second one returns the first's
    result and ack. When it asked for others, the model is told they were not recorded,
    as `coord done` tells a person, instead of reading the first's ack as its own."""
    ack = {"kind": "ack", "state": "done", "title": "parser fixed"}
    async with MCPClient(server(daemon.socket_path, COORD_AGENT="me")) as c:
        task = (await call(c, "post_task", title="fix the parser"))["task"]
        fence = (await call(c, "claim_task", id=task["id"]))["task"]["fence"]
        first = await c.call_tool(
            "complete_task", {"id": task["id"], "fence": fence, "result": "fixed", "then_post": ack}
        )
        same = await c.call_tool(
            "complete_task", {"id": task["id"], "fence": fence, "result": "fixed", "then_post": ack}
        )
        other = await c.call_tool(
            "complete_task",
            {"id": task["id"], "fence": fence, "result": "fixed better",
             "then_post": {**ack, "title": "parser fixed again"}},
        )  # fmt: skip
    for answered in (first, same):  # the first, and a repeat of exactly it: what was asked stands
        assert not answered.is_error and len(answered.content) == 1, text(answered)
    assert not other.is_error
    assert doc(other)["task"]["result"] == "fixed"
    assert doc(other)["posted"]["title"] == "parser fixed"
    assert f"#{task['id']} was done already" in text(other)
    assert "nothing of this call was recorded" in text(other) and "reopen_task" in text(other)


async def test_a_repeated_completion_is_told_whatever_it_asked_differently(
    daemon: DaemonProcess,
) -> None:
    """Another result alone, or an ack where the first completion posted none, is not
    recorded either; an ack found by its idempotency key is the call's own, not a repeat."""
    async with MCPClient(server(daemon.socket_path, COORD_AGENT="me")) as c:
        bare, keyed = [
            (await call(c, "post_task", title=title))["task"] for title in ("bare", "keyed")
        ]
        fence = (await call(c, "claim_task", id=bare["id"]))["task"]["fence"]
        await call(c, "complete_task", id=bare["id"], fence=fence, result="first")
        other_result = await c.call_tool(
            "complete_task", {"id": bare["id"], "fence": fence, "result": "second"}
        )
        now_an_ack = await c.call_tool(
            "complete_task", {"id": bare["id"], "fence": fence, "then_post": {"title": "late"}}
        )
        earlier = (await call(c, "post_task", title="posted before", idempotency_key="k1"))["task"]
        fence = (await call(c, "claim_task", id=keyed["id"]))["task"]["fence"]
        by_key = await c.call_tool(
            "complete_task",
            {"id": keyed["id"], "fence": fence,
             "then_post": {"title": "a new title", "idempotency_key": "k1"}},
        )  # fmt: skip
    assert "its result stays as shown" in text(other_result)
    assert "nothing of this call was recorded" in text(other_result)
    assert "the first completion posted no ack" in text(now_an_ack)
    assert doc(now_an_ack)["posted"] is None
    assert doc(by_key)["task"]["state"] == "done"  # recorded now, with the earlier post
    assert doc(by_key)["posted"]["id"] == earlier["id"]
    assert len(by_key.content) == 1, text(by_key)


async def test_two_servers_racing_for_one_task_make_one_winner(daemon: DaemonProcess) -> None:
    with Client(daemon.socket_path, project=PROJECT) as setup:
        task = setup.post("contested").task
    outcomes: dict[int, CallToolResult] = {}
    async with (
        MCPClient(server(daemon.socket_path, CLAUDE_CODE_SESSION_ID=session(1))) as one,
        MCPClient(server(daemon.socket_path, CLAUDE_CODE_SESSION_ID=session(2))) as two,
    ):
        go = trio.Event()

        async def claim(n: int, client: MCPClient) -> None:
            await go.wait()
            outcomes[n] = await client.call_tool("claim_task", {"id": task.id})

        async with trio.open_nursery() as nursery:
            nursery.start_soon(claim, 1, one)
            nursery.start_soon(claim, 2, two)
            await trio.sleep(0.05)
            go.set()
    won = [n for n, r in outcomes.items() if doc(r)["won"]]
    assert len(won) == 1
    winner = doc(outcomes[won[0]])["task"]["claimed_by"]
    loser = outcomes[3 - won[0]]
    assert not loser.is_error  # a lost claim is a normal answer
    assert f"held by {winner}" in text(loser)


async def test_sixteen_servers_racing_claim_next_take_every_task_once(
    daemon: DaemonProcess,
) -> None:
    with Client(daemon.socket_path, project=PROJECT) as setup:
        ids = {setup.post(f"t{n}").task.id for n in range(100)}
    taken: dict[int, list[int]] = {}

    async def work(n: int) -> None:
        params = server(daemon.socket_path, CLAUDE_CODE_SESSION_ID=session(100 + n))
        async with MCPClient(params) as c:
            mine: list[int] = []
            while (task := (await call(c, "claim_next"))["task"]) is not None:
                await call(c, "complete_task", id=task["id"], fence=task["fence"])
                mine.append(task["id"])
            taken[n] = mine

    async with trio.open_nursery() as nursery:
        for n in range(16):
            nursery.start_soon(work, n)
    every = [task_id for mine in taken.values() for task_id in mine]
    assert sorted(every) == sorted(ids)  # each exactly once
    assert len(taken) == 16


async def test_a_tab_is_one_agent_in_mcp_and_in_its_shell(daemon: DaemonProcess) -> None:
    env = {"CLAUDE_CODE_SESSION_ID": "3cda0b49-4380-4f6e-8b5a-9f0e1d2c3b4a"}
    async with MCPClient(server(daemon.socket_path, project=None, **env)) as c:
        via_mcp = await call(c, "whoami")
    via_shell = json.loads(coord("whoami", "--json", socket=daemon.socket_path, env=env).stdout)
    assert via_mcp["agent"] == via_shell["agent"] == "claude-3cda0b494380"
    # Issue 43: the board it reached, the one the shell reaches (what `coord doctor` compares).
    assert via_mcp["board_id"] == via_shell["board"]["board_id"] is not None
    assert via_mcp["board_unreached"] is None


async def test_whoami_says_why_no_board_was_reached(workdir: Path) -> None:
    async with MCPClient(server(workdir / "nobody.sock")) as c:
        me = await call(c, "whoami")  # validated against its outputSchema by the SDK
    assert me["board_id"] is None and "nobody.sock" in me["board_unreached"]


async def test_without_a_host_id_the_name_is_per_server_process(daemon: DaemonProcess) -> None:
    async with (
        MCPClient(server(daemon.socket_path)) as one,
        MCPClient(server(daemon.socket_path)) as two,
    ):
        first, second = await call(one, "whoami"), await call(two, "whoami")
        assert first["agent"] != second["agent"]
        assert first["agent"] == (await call(one, "whoami"))["agent"]  # stable
        assert "MCP server" in first["agent_source"]


async def test_claude_project_dir_names_the_board(daemon: DaemonProcess, repo: Path) -> None:
    sub = repo / "sub"
    sub.mkdir()
    params = server(daemon.socket_path, project=None, CLAUDE_PROJECT_DIR=str(sub))
    async with MCPClient(params) as c:
        me = await call(c, "whoami")
    assert me["project"] == str(repo.resolve())  # noqa: ASYNC240


async def test_wait_for_task_is_woken_by_a_post_from_another_process(
    daemon: DaemonProcess,
) -> None:
    async with MCPClient(server(daemon.socket_path, COORD_AGENT="waiter")) as c:
        result: dict[str, Any] = {}

        async def wait() -> None:
            result.update(await call(c, "wait_for_task", kind="bug", timeout_s=30))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(wait)
            await trio.sleep(0.5)
            started = time.monotonic()
            posted = await trio.to_thread.run_sync(
                lambda: coord(
                    "post",
                    "a bug",
                    "--kind",
                    "bug",
                    "--project",
                    PROJECT,
                    socket=daemon.socket_path,
                )
            )
            assert posted.returncode == 0
        assert result["task"]["title"] == "a bug"
        assert time.monotonic() - started < 10


async def test_a_long_wait_reports_progress_to_a_caller_that_asks(daemon: DaemonProcess) -> None:
    reported: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append(progress)

    async with MCPClient(server(daemon.socket_path, COORD_AGENT="w")) as c:
        result = await c.call_tool(
            "wait_for_task", {"kind": "never", "timeout_s": 7}, progress_callback=on_progress
        )
    assert doc(result)["task"] is None
    assert reported and reported == sorted(reported)


async def test_the_server_reconnects_after_a_daemon_restart(daemon: DaemonProcess) -> None:
    async with MCPClient(server(daemon.socket_path, COORD_AGENT="me")) as c:
        first = await call(c, "post_task", title="before")
        daemon.stop()
        daemon.start()
        await trio.sleep(0.2)
        listed = await call(c, "list_tasks")
        assert [t["id"] for t in listed["tasks"]] == [first["task"]["id"]]


async def test_no_daemon_is_a_tool_error_not_a_crash(workdir: Path) -> None:
    params = server(workdir / "absent.sock", COORD_AGENT="me")  # autostart is off
    async with MCPClient(params) as c:
        for _ in range(2):  # the server stays up
            result = await c.call_tool("board", {})
            assert result.is_error
            assert text(result).startswith("daemon_unavailable: ")
            assert "coordd serve" in text(result)


async def test_the_board_fits_a_context_window(daemon: DaemonProcess) -> None:
    with Client(daemon.socket_path, agent="poster", project=PROJECT) as setup:
        for n in range(1000):
            setup.post(f"task number {n} with a reasonably long title " + "x" * 60, priority=n % 7)
        for task_id in range(1, 6):
            setup.claim(task_id, "other-tab")
    async with MCPClient(server(daemon.socket_path, COORD_AGENT="me")) as c:
        result = await c.call_tool("board", {})
        board = doc(result)
    assert board["counts"]["pending"] == 995 and board["ready_total"] == 995
    assert len(board["ready"]) == 8 and board["ready"][0]["priority"] == 6
    others = {a["agent"]: a["holding"] for a in board["other_agents"]}
    assert others == {"other-tab": [1, 2, 3, 4, 5], "poster": []}  # both active just now
    # Tokens: JSON runs at about 3 to 4 characters per token; 4,500 characters stay
    # under 1,500 tokens even at 3.
    assert len(text(result)) < 4500, len(text(result))


def test_without_the_sdk_coord_mcp_says_what_to_install() -> None:
    result = coord_without("mcp", "mcp")
    assert result.returncode == 1
    assert "pip install 'coordd-client[mcp]'" in result.stderr


async def test_the_boards_other_agents_are_this_projects_seen_lately(
    daemon: DaemonProcess,
) -> None:
    """Not every name the daemon knows (coordd_client.presence): another project's
    agent costs this tab no tokens."""
    with Client(daemon.socket_path, agent="here", project=PROJECT) as setup:
        setup.post("posted here")
    with Client(daemon.socket_path, agent="reserver", project=PROJECT) as setup:
        setup.reserve(["src/**"])
    with Client(daemon.socket_path, agent="elsewhere", project="/elsewhere") as setup:
        setup.post("posted elsewhere")
    async with MCPClient(server(daemon.socket_path, COORD_AGENT="me")) as c:
        board = await call(c, "board")
    assert sorted(a["agent"] for a in board["other_agents"]) == ["here", "reserver"]


async def test_absolute_paths_from_any_worktree_are_the_boards(
    daemon: DaemonProcess, repo: Path, workdir: Path
) -> None:
    """Before: an absolute path from a linked worktree (not under the main worktree,
    the project) was refused by reserve_paths and check_paths."""
    import subprocess

    main = repo.resolve()  # noqa: ASYNC240
    linked = (workdir / "linked").resolve()
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(linked)], check=True)  # noqa: ASYNC221
    (linked / "src").mkdir()
    params = server(daemon.socket_path, project=str(main), CLAUDE_CODE_SESSION_ID=session(1))
    async with MCPClient(params) as c:
        held = await call(c, "reserve_paths", patterns=[str(linked / "src" / "auth.py")])
        assert [r["pattern"] for r in held["reservations"]] == ["src/auth.py"]
    other = server(daemon.socket_path, project=str(main), CLAUDE_CODE_SESSION_ID=session(2))
    async with MCPClient(other) as c:
        found = await call(c, "check_paths", paths=[str(main / "src" / "auth.py")])
        assert [x["path"] for x in found["conflicts"]] == ["src/auth.py"]
        found = await call(c, "check_paths", paths=[str(linked / "src" / "auth.py")])
        assert [x["path"] for x in found["conflicts"]] == ["src/auth.py"]

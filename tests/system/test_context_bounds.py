"""What a session starts with and what the MCP `board` answers: bounded whatever the board
holds, ranked (the caller's own holdings first), and the repository's own workflow text
from `.coord/PRIME.md`; against a real daemon, through the real `coord` and `coord mcp`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import trio
from mcp import Client as MCPClient
from mcp.client.stdio import StdioServerParameters

from coordd_apps.hooks.context import CONTEXT_CHARS, WORKFLOW, WORKFLOW_CHARS
from coordd_apps.mcp_bridge import board
from coordd_apps.summary import CLAIMS_READ, CUT_LINE, SUMMARY_CHARS
from coordd_client import Client
from support import COORD, DaemonProcess, coord, coord_env, git_repo

#: The longest names the daemon takes (an agent 128 characters, a title 300: 280 plus a prefix).
ME = "me-" + "m" * 125
LONG = "x" * 280


def start_context(socket: Path, project: Path | str, agent: str = ME, host: str = "claude") -> str:
    """The session-start hook's `additionalContext`, as Claude Code (or `host`) reads it."""
    stdin = json.dumps({"session_id": "s", "cwd": str(project), "hook_event_name": "SessionStart"})
    done = coord(
        "hook", "session-start", "--host", host, "--agent", agent, "--project", str(project),
        socket=socket, stdin=stdin,
    )  # fmt: skip
    assert done.returncode == 0, done
    context: str = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    return context


def fill_worst_board(socket: Path, project: str) -> None:
    """Every section at its widest: long titles, kinds, names and patterns, many of each."""
    with Client(socket, agent=ME, project=project) as me:
        for n in range(30):
            task = me.post(f"{n} {LONG}", kind="k" * 32).task
            me.claim(task.id, ME)
        me.reserve([f"{n}/{'p' * 900}/**" for n in range(40)])
        for n in range(30):
            me.post(f"for me {n} {LONG}", assignee=ME, kind="k" * 32)
        for n in range(200):
            me.post(f"ready {n} {LONG}", priority=n % 9, kind="k" * 32)
        for n in range(10):
            me.post(f"ack {n} {LONG}", kind="ack", state="done")
    for n in range(50):
        name = f"other-{n:02d}-" + "o" * 119
        with Client(socket, agent=name, project=project) as other:
            for _ in range(7):
                task = other.post(f"theirs {LONG}").task
                other.claim(task.id, name)


def test_a_full_board_gives_a_context_under_the_bound(daemon: DaemonProcess) -> None:
    project = "/bounds"
    fill_worst_board(daemon.socket_path, project)
    context = start_context(daemon.socket_path, project)
    assert len(context) <= CONTEXT_CHARS, len(context)
    assert CUT_LINE in context  # the bound, not the section sizes, cut it
    assert context.endswith(WORKFLOW)
    prime = coord("prime", "--agent", ME, "--project", project, socket=daemon.socket_path)
    assert len(prime.stdout.rstrip("\n")) <= SUMMARY_CHARS, len(prime.stdout)

    async def ask_board() -> str:
        environ = coord_env(daemon.socket_path, COORD_AGENT=ME, COORD_PROJECT=project)
        params = StdioServerParameters(command=COORD, args=["mcp"], env=environ)
        with trio.fail_after(120):
            async with MCPClient(params) as client:
                result = await client.call_tool("board", {})
        assert not result.is_error
        return "\n".join(block.text for block in result.content if hasattr(block, "text"))

    answered = trio.run(ask_board)
    assert len(answered.encode()) <= board.BOARD_CHARS, len(answered)
    shown = json.loads(answered)
    assert shown["my_claims"] and shown["cut"] > 0  # rows went from the bottom, not the top
    assert shown["counts"]["claimed"] == 30 + 50 * 7


def test_the_context_is_ranked_by_use_to_the_caller(daemon: DaemonProcess) -> None:
    project = "/ranked"
    with Client(daemon.socket_path, agent="me", project=project) as me:
        mine = me.post("mine").task
        me.claim(mine.id, "me")
        me.reserve(["src/mine/**"], reason="my area")
        me.post("for me", assignee="me")
        for priority in (1, 9, 5):
            me.post(f"ready p{priority}", priority=priority)
    with Client(daemon.socket_path, agent="other", project=project) as other:
        theirs = other.post("theirs").task
        other.claim(theirs.id, "other")
    context = start_context(daemon.socket_path, project, agent="me")
    order = ["Your claims (1):", "Your reservations (1):", "  src/mine/** (exclusive",
             "Assigned to you (1):", "Ready to claim (4, most urgent first):", "ready p9",
             "ready p5", "ready p1", "Other agents:", f"other: holds #{theirs.id}"]  # fmt: skip
    found = [context.find(line) for line in order]
    assert -1 not in found and found == sorted(found), context


def test_the_repositorys_prime_file_replaces_the_workflow_text(
    daemon: DaemonProcess, workdir: Path
) -> None:
    repo = git_repo(workdir / "repo").resolve()
    (repo / ".coord").mkdir()
    (repo / ".coord" / "PRIME.md").write_text("Our way: every change goes through review.\n")
    with Client(daemon.socket_path, agent="poster", project=str(repo)) as poster:
        poster.post("a live task")
    context = start_context(daemon.socket_path, repo, agent="me")
    assert context.startswith(f"coordd board: project {repo}; you are me")
    assert "a live task" in context  # the board's lines are still there
    assert context.endswith("Our way: every change goes through review.")
    assert WORKFLOW not in context

    (repo / ".coord" / "PRIME.md").write_text("y" * 10 * WORKFLOW_CHARS)
    cut = start_context(daemon.socket_path, repo, agent="me")
    assert "PRIME.md goes on; cut at" in cut and len(cut) <= CONTEXT_CHARS


def test_a_prime_file_that_is_not_a_regular_file_is_passed_over(
    daemon: DaemonProcess, workdir: Path
) -> None:
    # A FIFO blocked the session-start hook until the host's timeout (Claude Code: 600 s).
    repo = git_repo(workdir / "repo").resolve()
    (repo / ".coord").mkdir()
    os.mkfifo(repo / ".coord" / "PRIME.md")
    context = start_context(daemon.socket_path, repo, agent="me")
    assert context.startswith(f"coordd board: project {repo}; you are me")
    assert context.endswith(WORKFLOW)


def test_a_codex_tab_is_told_where_coord_is(daemon: DaemonProcess, workdir: Path) -> None:
    """Codex's shell tool runs `bash -lc`: a login shell may rebuild PATH without the
    virtualenv, so the context names coord's absolute path (issue 43), within the bound."""
    repo = git_repo(workdir / "repo").resolve()
    context = start_context(daemon.socket_path, repo, agent="me", host="codex")
    assert context.endswith(f"In your shell, run coord as {COORD} if `coord` is not found.")
    assert COORD not in start_context(daemon.socket_path, repo, agent="me")  # Claude Code's
    (repo / ".coord").mkdir()
    (repo / ".coord" / "PRIME.md").write_text("y" * 10 * WORKFLOW_CHARS)
    cut = start_context(daemon.socket_path, repo, agent="me", host="codex")
    assert "PRIME.md goes on; cut at" in cut and cut.endswith("is not found.")
    assert len(cut) <= CONTEXT_CHARS


def test_claims_past_those_read_are_counted_not_read(daemon: DaemonProcess) -> None:
    """A project with more live claims than a session start reads (`CLAIMS_READ`, the
    most urgent) says how many it left unread, from the daemon's count."""
    project = "/many-claims"
    with Client(daemon.socket_path, agent="busy", project=project) as busy:
        for n in range(CLAIMS_READ + 7):
            busy.claim(busy.post(f"held {n}").task.id, "busy")
    context = start_context(daemon.socket_path, project)
    assert "Other agents:" in context and "  busy: holds" in context
    assert "... and 7 more claims, not read here (coord ls --state claimed)" in context

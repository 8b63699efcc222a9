"""Real Claude Code (2.1.332, tests/hosts/package.json) against coord, as a new user sets it up.

Setup runs once, as the README says (`coord setup claude`, user scope); then
every scenario runs in the main worktree and in a linked worktree created
after setup. The model is `FakeAnthropic`: a script of tool calls, so the
real binary runs its real tools and fires every hook, and every request is
recorded, which is how a test knows what the model was told.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from coordd_client import Client
from hosts.fake_anthropic import FakeAnthropic, Say, Step, ToolCall
from hosts.world import CLAUDE, World, require

#: A headless run that hangs on a hook is a failure, not a slow pass.
RUN_TIMEOUT_S = 180


def set_up(world: World) -> None:
    world.trust_claude_folder(world.repo)
    done = world.coord("setup", "claude")
    assert done.returncode == 0, done.stderr


def claude_p(
    world: World, cwd: Path, steps: list[Step], *extra: str
) -> tuple[FakeAnthropic, subprocess.CompletedProcess[str], float]:
    """`claude -p` in `cwd` with the scripted model: (the fake, the run, seconds it took)."""
    with FakeAnthropic(steps) as api:
        env = {**world.env, "ANTHROPIC_BASE_URL": api.url}
        started = time.monotonic()
        done = subprocess.run(
            [
                require(CLAUDE),
                "-p",
                "work on the board",
                "--output-format",
                "json",
                "--permission-mode",
                "acceptEdits",
                "--allowedTools",
                "mcp__coord",
                *extra,
            ],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
        return api, done, time.monotonic() - started


def told_agent(api: FakeAnthropic) -> str:
    """The name the session-start context gave the model."""
    match = re.search(r"coordd board: project [^;]*; you are ([\w.-]+)", api.told())
    assert match, "the session-start context did not reach the model"
    return match.group(1)


@pytest.mark.parametrize("where", ["main", "linked"])
def test_a_tab_is_one_agent_and_its_guard_holds(world: World, where: str) -> None:
    set_up(world)
    cwd = world.repo if where == "main" else world.worktree("feature")
    world.trust_claude_folder(cwd)
    with Client(world.daemon.socket_path, agent="other-tab", project=str(world.repo)) as other:
        other.reserve(["src/owned.py"])
        task = other.post("fix the parser").task
    owned, mine = cwd / "src" / "owned.py", cwd / "src" / "mine.py"
    steps: list[Step] = [
        ToolCall("mcp__coord__whoami", {}),
        ToolCall("mcp__coord__claim_task", {"id": task.id}),
        ToolCall("Read", {"file_path": str(owned)}),
        ToolCall(
            "Edit",
            {"file_path": str(owned), "old_string": "# owned.py", "new_string": "# mine now"},
        ),
        ToolCall("mcp__coord__reserve_paths", {"patterns": ["src/mine.py"]}),
        ToolCall("Read", {"file_path": str(mine)}),
        ToolCall(
            "Edit",
            {"file_path": str(mine), "old_string": "# mine.py", "new_string": "# edited"},
        ),
        Say("done"),
    ]
    api, done, _ = claude_p(world, cwd, steps)
    assert done.returncode == 0, done.stderr
    results = api.tool_results()
    agent = told_agent(api)
    # The MCP server, the hooks and the context all name the tab the same.
    assert json.loads(results[0])["agent"] == agent
    assert json.loads(results[1])["won"] is True
    # Another agent's file: the edit is denied, the reason reaches the model.
    assert "reserved" in results[3] and "other-tab" in results[3]
    assert owned.read_text() == "# owned.py\n"
    # The tab's own reservation does not block its own edit.
    assert mine.read_text() == "# edited\n"
    # The run ended, so did the session: its claim went back to the board.
    with Client(world.daemon.socket_path, project=str(world.repo)) as look:
        back = look.get(task.id).task
        assert back.state == "pending", back
        assert look.reservations(agent=agent).reservations == []


def test_the_mcp_server_is_connected_in_every_worktree(world: World) -> None:
    set_up(world)
    later = world.worktree("later")
    for cwd in (world.repo, later):
        listed = subprocess.run(
            [require(CLAUDE), "mcp", "list"],
            cwd=cwd,
            env=world.env,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
        assert listed.returncode == 0, listed.stderr
        line = next(x for x in listed.stdout.splitlines() if x.startswith("coord"))
        assert "Connected" in line, listed.stdout


def test_a_headless_run_returns_at_its_last_turn(world: World) -> None:
    """`claude -p` in a set-up repository ends when the model does, not when the wake
    hook's horizon runs out (it used to hold the run for 55 minutes)."""
    set_up(world)
    _, done, _ = claude_p(world, world.repo, [Say("nothing to do")], "--debug", "hooks")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "nothing to do"
    # The wake hook ran on Stop, saw an unattended run and left at once.
    log = "".join(p.read_text() for p in (world.home / ".claude" / "debug").glob("*.txt"))
    stop = [line for line in log.splitlines() if "Hook Stop (Stop) success" in line]
    assert stop and "not waiting" in stop[-1], log[-2000:]


class Tmux:
    """An interactive `claude` in a detached tmux session: a terminal a person would use."""

    def __init__(self, world: World, api: FakeAnthropic, *args: str) -> None:
        assert shutil.which("tmux"), "the interactive tab needs tmux (.ci/run installs it)"
        self.name = f"cc{world.root.name}"
        env = {**world.env, "ANTHROPIC_BASE_URL": api.url, "TERM": "xterm-256color"}
        command = ["env", "-i", *[f"{k}={v}" for k, v in env.items()], require(CLAUDE), *args]
        subprocess.run(
            ["tmux", "new-session", "-d", "-s", self.name, "-x", "120", "-y", "40", *command],
            cwd=world.repo,
            check=True,
        )

    def type(self, text: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", text], check=True)
        subprocess.run(["tmux", "send-keys", "-t", self.name, "Enter"], check=True)

    def screen(self) -> str:
        return subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", self.name],
            capture_output=True,
            text=True,
            check=False,
        ).stdout

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True, check=False)


def approve_api_key(world: World) -> None:
    """The interactive first start asks once whether to use `$ANTHROPIC_API_KEY`: yes."""
    config = world.home / ".claude.json"
    doc = json.loads(config.read_text())
    key = world.env["ANTHROPIC_API_KEY"]
    doc["customApiKeyResponses"] = {"approved": [key[-20:]], "rejected": []}
    config.write_text(json.dumps(doc, indent=2))


def test_an_idle_tab_is_woken_by_an_assignment_and_stays_one_agent_across_clear(
    world: World,
) -> None:
    set_up(world)
    approve_api_key(world)
    mine = world.repo / "src" / "mine.py"
    steps: list[Step] = [
        ToolCall("mcp__coord__reserve_paths", {"patterns": ["src/mine.py"]}),
        Say("ready"),  # the first turn ends: the tab is idle, its wake hook armed
        Say("woken"),  # the turn the assignment starts
        ToolCall("mcp__coord__whoami", {}),  # after /clear
        ToolCall("Read", {"file_path": str(mine)}),
        ToolCall("Edit", {"file_path": str(mine), "old_string": "# mine.py", "new_string": "# ok"}),
        Say("edited"),
    ]
    with FakeAnthropic(steps) as api:
        flags = ("--permission-mode", "acceptEdits", "--allowedTools", "mcp__coord")
        tab = Tmux(world, api, *flags, "--", "reserve my file")
        try:
            assert api.wait_for_main_requests(2, RUN_TIMEOUT_S), tab.screen()
            agent = told_agent(api)
            with Client(world.daemon.socket_path, agent="planner", project=str(world.repo)) as c:
                wanted = c.post("review the migration", assignee=agent).task
            # The assignment alone starts a turn; the model is told what and by whom.
            assert api.wait_for_main_requests(3, RUN_TIMEOUT_S), tab.screen()
            woken = api.main_requests()[2].text()
            assert f"#{wanted.id} 'review the migration' was assigned to you by planner" in woken
            # Shown as coord's, not as a failed "Stop hook feedback".
            assert _eventually(lambda: "coord: work or a message" in tab.screen()), tab.screen()
            assert "Stop hook feedback" not in tab.screen()
            # /clear: hooks and the shell get a new session id, the MCP server keeps the old
            # one; the tab stays one agent, so its own reservation does not block it.
            tab.type("/clear")
            assert _eventually(lambda: "woken" not in tab.screen()), tab.screen()
            tab.type("edit my file")
            assert api.wait_for_main_requests(7, RUN_TIMEOUT_S), tab.screen()
            after_clear = api.main_requests()[-1].text()
            assert "reserve my file" not in after_clear  # the conversation was cleared...
            assert f"you are {agent}" in after_clear  # ...and the new session is the same agent
            results = api.tool_results()
            assert json.loads(results[-3])["agent"] == agent, results
            assert mine.read_text() == "# ok\n", results
        finally:
            tab.close()


def _eventually(check: object, timeout_s: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if callable(check) and check():
            return True
        time.sleep(0.2)
    return False

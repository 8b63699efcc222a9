"""Real Codex (0.171.0, tests/hosts/package.json) against coord, as a new user sets it up.

`coord setup codex` (user scope) once, the hooks trusted once as a user does
in `/hooks`, then `codex exec` in the main worktree and in a linked one made
after setup, with the scripted fake Responses API as the model.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess

import pytest

from coordd_client import Client
from coordd_wire.rendezvous import live_daemons, users_board_path
from hosts.codex_host import Step, codex_exec, configure, list_hooks, trust_hooks
from hosts.fake_openai import FakeResponsesAPI
from hosts.world import CODEX, World, require


def answer(output: str) -> dict[str, object]:
    """An MCP tool's JSON result, as Codex hands it back (after `Wall time` and `Output:`)."""
    decoded: dict[str, object] = json.loads(output.split("Output:\n", 1)[-1])
    return decoded


def patch(path: str, old: str, new: str) -> str:
    return f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch\n"


@pytest.mark.parametrize("where", ["main", "linked"])
def test_a_codex_tab_is_one_agent_and_its_guard_holds(world: World, where: str) -> None:
    with Client(world.daemon.socket_path, agent="other-tab", project=str(world.repo)) as other:
        other.reserve(["src/owned.py"])
        task = other.post("fix the parser").task
    steps: list[Step] = [
        {"mcp": "coord", "tool": "whoami", "arguments": {}},
        {"mcp": "coord", "tool": "claim_task", "arguments": {"id": task.id}},
        {"apply_patch": patch("src/owned.py", "# owned.py", "# mine now")},
        {"mcp": "coord", "tool": "reserve_paths", "arguments": {"patterns": ["src/mine.py"]}},
        {"apply_patch": patch("src/mine.py", "# mine.py", "# edited")},
        {"text": "done"},
    ]
    with FakeResponsesAPI(steps) as fake:
        configure(world, fake)
        done = world.coord("setup", "codex")
        assert done.returncode == 0 and "/hooks" in done.stdout, done.stderr
        cwd = world.repo if where == "main" else world.worktree("feature")
        listed = subprocess.run(
            [require(CODEX), "mcp", "list"],
            cwd=cwd,
            env=world.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert re.search(r"^coord\s", listed.stdout, re.M), listed.stdout + listed.stderr
        # Codex skips new hooks until they are reviewed: before, all coord's are untrusted.
        before = [h for h in list_hooks(world, cwd) if "coord" in json.dumps(h)]
        assert {h["eventName"] for h in before} >= {"sessionStart", "preToolUse", "sessionEnd"}
        assert {h["trustStatus"] for h in before} == {"untrusted"}
        trust_hooks(world, cwd)
        run = codex_exec(world, cwd, fake)
        assert run.returncode == 0, run.stderr[-4000:]
    match = re.search(r"coordd board: project [^;]*; you are ([\w.-]+)", fake.text())
    assert match, "the session-start context did not reach the model"
    agent = match.group(1)
    # The MCP server (started without CODEX_THREAD_ID) is the hooks' agent: the tab registry.
    assert answer(fake.tool_output(0))["agent"] == agent, fake.tool_output(0)
    assert agent.startswith("codex-") and "mcp-client" not in agent
    assert answer(fake.tool_output(1))["won"] is True
    # Another agent's file: the patch is refused, the model told why, the file unchanged.
    assert "other-tab" in fake.tool_output(2) and "reserved" in fake.tool_output(2)
    assert (cwd / "src" / "owned.py").read_text() == "# owned.py\n"
    # The tab's own reservation (made through MCP) does not block its own patch.
    assert (cwd / "src" / "mine.py").read_text() == "# edited\n", fake.tool_output(4)
    # The run ended: SessionEnd gave the claim and the reservation back.
    with Client(world.daemon.socket_path, project=str(world.repo)) as look:
        assert look.get(task.id).task.state == "pending"
        assert look.reservations(agent=agent).reservations == []


def test_a_codex_edit_with_no_board_reaches_the_model_as_unchecked(world: World) -> None:
    """Issue 43 with the real binary: Codex 0.171.0 puts an allowed PreToolUse's
    `additionalContext` before the model as a developer message (a
    `"permissionDecision": "allow"` would fail the hook and lose it), so an edit with
    no daemon (and no autostart) goes ahead and the model is told it went unchecked."""
    steps: list[Step] = [{"apply_patch": patch("src/free.py", "# free.py", "# edited")}]
    with FakeResponsesAPI([*steps, {"text": "done"}]) as fake:
        configure(world, fake)
        done = world.coord("setup", "codex")
        assert done.returncode == 0, done.stderr
        trust_hooks(world, world.repo)
        assert world.daemon.stop() == 0
        world.env["COORD_NO_AUTOSTART"] = "1"
        run = codex_exec(world, world.repo, fake)
        assert run.returncode == 0, run.stderr[-4000:]
    told = fake.text()
    assert "coordd board unavailable (no coordd answers on" in told  # the session start
    assert "coord: could not check reservations (no coordd answers on" in told
    assert "allowed UNCHECKED" in told and "Mention this to the user" in told
    assert (world.repo / "src" / "free.py").read_text() == "# edited\n"


def test_codex_s_mcp_server_reaches_the_board_of_the_user_s_shell(world: World) -> None:
    """Issue 43: with XDG_STATE_HOME, XDG_RUNTIME_DIR and TMPDIR customised in Codex's
    environment and no daemon running, the MCP server Codex starts (with its short list
    of variables, plus the env_vars `coord setup codex` writes) starts the board the
    user's shell would: `coord whoami` in that shell then reaches the same board id."""
    world.daemon.ensure_dead()  # nothing runs: the MCP server starts the daemon
    # ... and nothing is recorded: the world's daemon, on its environment's default
    # store, recorded itself as the user's board, which a client would start instead.
    users_board_path(world.env).unlink(missing_ok=True)
    runtime, tmp = world.root / "run2", world.root / "tmp2"  # no record of that daemon there
    for directory in (runtime, tmp):
        directory.mkdir(mode=0o700)
    world.env |= {"XDG_STATE_HOME": str(world.root / "state")}
    world.env |= {"XDG_RUNTIME_DIR": str(runtime), "TMPDIR": str(tmp)}
    steps: list[Step] = [{"mcp": "coord", "tool": "whoami", "arguments": {}}, {"text": "done"}]
    try:
        with FakeResponsesAPI(steps) as fake:
            configure(world, fake)
            assert world.coord("setup", "codex").returncode == 0
            run = codex_exec(world, world.repo, fake)
            assert run.returncode == 0, run.stderr[-4000:]
        via_mcp = answer(fake.tool_output(0))
        shell = world.coord("whoami", "--json", "--no-start")
        board = json.loads(shell.stdout)["board"]
        assert via_mcp["board_id"] is not None, via_mcp
        assert via_mcp["board_id"] == board["board_id"], (via_mcp, board)
        (daemon,) = live_daemons(world.env)  # one board, on the shell's own store:
        # without env_vars it was the one under HOME, a board the shell would not start.
        assert daemon.store == f"sqlite:{world.root / 'state' / 'coordd' / 'coord.db'}"
        assert via_mcp["socket"] == str(runtime / "coordd" / "coordd.sock")
    finally:
        for daemon in live_daemons(world.env):
            os.kill(daemon.pid, signal.SIGTERM)

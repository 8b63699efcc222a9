"""Issue 43 with the real hosts: Claude Code and Codex, run with `$XDG_STATE_HOME`,
`$XDG_RUNTIME_DIR` and `$TMPDIR` all set to directories of their own, and with all three
unset, each reach the one board the user's shell serves on every surface (the MCP server
the host starts, its hooks, `coord` in its shell tool) and start no second daemon.

The user's daemon is started as `make run` starts it, in the user's environment; then
`coord setup HOST`, then one headless run whose scripted model calls the MCP `whoami`,
runs `coord whoami --json` in its shell and edits a file another agent reserved on the
one board (the pre-edit hook must deny it, which only that board can say).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from coordd_client import Client
from coordd_wire.rendezvous import LiveDaemon, live_daemons
from hosts.codex_host import Step as CodexStep
from hosts.codex_host import codex_exec, configure, trust_hooks
from hosts.fake_anthropic import Say, Step, ToolCall
from hosts.fake_openai import FakeResponsesAPI
from hosts.test_claude import claude_p, set_up
from hosts.test_codex import answer, patch
from hosts.world import World
from support import COORD, SHARED_TMP_SOCKET, daemon_pids, serve_by_default, stop_pid

pytestmark = SHARED_TMP_SOCKET

VARIABLES = ("XDG_STATE_HOME", "XDG_RUNTIME_DIR", "TMPDIR")
#: Seconds the user's daemon has to start and announce itself on a loaded machine.
START_BOUND_S = 90.0


@pytest.fixture(params=["custom", "unset"])
def user(request: pytest.FixtureRequest) -> Iterator[World]:
    """A world whose user set the three variables to directories of their own, or not at
    all; its daemon started as `make run` starts it, in that environment."""
    world = World()
    world.daemon.ensure_dead()  # the world's own daemon pins --db and --socket: not this
    for name in VARIABLES:
        world.env.pop(name, None)
    if request.param == "custom":
        for name in VARIABLES:
            directory = world.root / name.lower()
            directory.mkdir(mode=0o700)
            world.env[name] = str(directory)
    else:
        shared = Path(f"/tmp/coordd-{os.getuid()}/coordd.sock")
        assert not shared.exists() or not answers(shared), f"a daemon already serves {shared}"
    process = serve_by_default(world.env, world.root / "user-daemon.log")
    try:
        announced(world)
        yield world
    finally:
        for pid in {process.pid, *daemon_pids(world.home)}:
            stop_pid(pid, [process])
        world.close()


def answers(path: Path) -> bool:
    from coordd_client.discovery import answers as probe

    return probe(path)


def announced(world: World) -> LiveDaemon:
    deadline = time.monotonic() + START_BOUND_S
    while not (live := live_daemons(world.env)):
        assert time.monotonic() < deadline, "the user's daemon never announced itself"
        time.sleep(0.05)
    (daemon,) = live
    return daemon


def reserve_for_another_tab(world: World, daemon: LiveDaemon) -> None:
    with Client(Path(daemon.socket), agent="other-tab", project=str(world.repo)) as other:
        other.reserve(["src/owned.py"])


def shell_board(output: str) -> str:
    """The board id in `coord whoami --json`'s output, as a shell tool hands it back."""
    start = output.index('{"agent"')
    document = json.JSONDecoder().raw_decode(output[start:])[0]
    return str(document["board"]["board_id"])


def test_claude_code_reaches_the_one_board_on_every_surface(user: World) -> None:
    daemon = announced(user)
    set_up(user)
    reserve_for_another_tab(user, daemon)
    owned = user.repo / "src" / "owned.py"
    steps: list[Step] = [
        ToolCall("mcp__coord__whoami", {}),
        ToolCall("Bash", {"command": f"{COORD} whoami --json"}),
        ToolCall("Read", {"file_path": str(owned)}),
        ToolCall(
            "Edit", {"file_path": str(owned), "old_string": "# owned.py", "new_string": "# mine"}
        ),
        Say("done"),
    ]
    api, done, _ = claude_p(user, user.repo, steps, "--allowedTools", "Bash")
    assert done.returncode == 0, done.stderr
    results = api.tool_results()
    assert json.loads(results[0])["board_id"] == daemon.board_id, results[0]
    assert shell_board(results[1]) == daemon.board_id, results[1]
    assert "other-tab" in results[3] and "reserved" in results[3], results[3]
    assert owned.read_text() == "# owned.py\n"
    assert daemon_pids(user.home) == [daemon.pid], "a second daemon was started"


def test_codex_reaches_the_one_board_on_every_surface(user: World) -> None:
    daemon = announced(user)
    reserve_for_another_tab(user, daemon)
    steps: list[CodexStep] = [
        {"mcp": "coord", "tool": "whoami", "arguments": {}},
        {"shell": f"{COORD} whoami --json"},
        {"apply_patch": patch("src/owned.py", "# owned.py", "# mine")},
        {"text": "done"},
    ]
    with FakeResponsesAPI(steps) as fake:
        configure(user, fake)
        done = user.coord("setup", "codex")
        assert done.returncode == 0, done.stderr
        trust_hooks(user, user.repo)
        run = codex_exec(user, user.repo, fake)
        assert run.returncode == 0, run.stderr[-4000:]
    assert answer(fake.tool_output(0))["board_id"] == daemon.board_id, fake.tool_output(0)
    assert shell_board(fake.tool_output(1)) == daemon.board_id, fake.tool_output(1)
    assert "other-tab" in fake.tool_output(2) and "reserved" in fake.tool_output(2)
    assert (user.repo / "src" / "owned.py").read_text() == "# owned.py\n"
    # The context names coord's path for a login shell that may not find it.
    assert f"run coord as {COORD}" in fake.text()
    assert daemon_pids(user.home) == [daemon.pid], "a second daemon was started"

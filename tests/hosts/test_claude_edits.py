"""Issue 33 with real Claude Code (tests/hosts/package.json): after `coord setup claude`,
the tab's first edit reserves the file, a write based on a stale read is denied with the
issue's message and allowed after a re-read, and a file another tab reserved is refused.

"Another tab" edits in the same directory mid-run through the model's own Bash tool: a
small script that changes the file and records the edit as another agent, as that tab's
post-edit hook would. The model is `FakeAnthropic` (a script of tool calls).
"""

from __future__ import annotations

import json
import sys

from coordd_client import Client
from hosts.fake_anthropic import Say, Step, ToolCall
from hosts.test_claude import claude_p, set_up, told_agent
from hosts.world import World

OTHER_TAB = """\
import hashlib, pathlib, sys
from coordd_client import Client
path = pathlib.Path(sys.argv[2])
path.write_text("# changed by the other tab\\n")
digest = hashlib.sha256(path.read_bytes()).hexdigest()
with Client(sys.argv[1], agent="other-tab", project=sys.argv[3]) as other:
    other.record_edit(["src/free.py"], [digest], worktree=sys.argv[3])
"""


def test_a_stale_write_is_denied_then_allowed_after_a_read_and_the_edit_reserves(
    world: World,
) -> None:
    set_up(world)
    world.trust_claude_folder(world.repo)
    free = world.repo / "src" / "free.py"
    script = world.root / "other_tab.py"
    script.write_text(OTHER_TAB)
    with Client(world.daemon.socket_path, agent="other-tab", project=str(world.repo)) as other:
        other.reserve(["src/owned.py"])
    other_tab = f"{sys.executable} {script} {world.daemon.socket_path} {free} {world.repo}"
    edit = {"file_path": str(free), "old_string": "# changed by the other tab",
            "new_string": "# mine"}  # fmt: skip
    owned = str(world.repo / "src" / "owned.py")
    taken = {"file_path": owned, "old_string": "# owned.py", "new_string": "# taken"}
    steps: list[Step] = [
        ToolCall("Read", {"file_path": str(free)}),
        ToolCall("Bash", {"command": other_tab, "description": "the other tab edits"}),
        ToolCall("Edit", edit),  # based on the read before the other tab's edit: stale
        ToolCall("Read", {"file_path": str(free)}),
        ToolCall("Edit", edit),  # read again: allowed, and reserved on this first edit
        ToolCall("mcp__coord__list_reservations", {"mine": True}),
        ToolCall("Edit", taken),
        Say("done"),
    ]
    api, done, _ = claude_p(world, world.repo, steps, "--allowedTools", "Bash")
    assert done.returncode == 0, done.stderr
    results = api.tool_results()
    agent = told_agent(api)
    stale = results[2]
    assert "src/free.py changed by other-tab at " in stale, results
    assert "since you read it; read it again, then edit" in stale
    assert free.read_text() == "# mine\n"  # the second edit, after the re-read
    reserved = json.loads(results[5])["reservations"]
    assert [(r["pattern"], r["agent"]) for r in reserved] == [("src/free.py", agent)]
    assert "reserved" in results[6] and "other-tab" in results[6]
    assert (world.repo / "src" / "owned.py").read_text() == "# owned.py\n"
    with Client(world.daemon.socket_path, project=str(world.repo)) as look:
        # The session ended with the run: its session-bound reservation with it.
        assert look.reservations(agent=agent).reservations == []
        edits = {(e.path, e.agent) for e in look.recent_edits().edits}
        assert ("src/free.py", agent) in edits  # its PostToolUse recorded the edit


def test_an_edit_with_no_board_reaches_the_model_as_unchecked_then_a_repository_refuses(
    world: World,
) -> None:
    """Issue 43 with the real binary: no daemon (and no autostart), an edit goes ahead and
    the model is told, in its own context, that it went ahead unchecked; once the
    repository says `"unreachable": "deny"` the next edit is refused, saying why."""
    set_up(world)
    assert world.daemon.stop() == 0
    world.env["COORD_NO_AUTOSTART"] = "1"
    free, mine = world.repo / "src" / "free.py", world.repo / "src" / "mine.py"
    config = world.repo / ".coord" / "config.json"
    refuse = f'mkdir -p {config.parent} && echo \'{{"unreachable": "deny"}}\' > {config}'
    steps: list[Step] = [
        ToolCall("Read", {"file_path": str(free)}),
        ToolCall("Edit", {"file_path": str(free), "old_string": "# free.py", "new_string": "# x"}),
        ToolCall("Bash", {"command": refuse, "description": "the repository refuses"}),
        ToolCall("Read", {"file_path": str(mine)}),
        ToolCall("Edit", {"file_path": str(mine), "old_string": "# mine.py", "new_string": "# y"}),
        Say("done"),
    ]
    api, done, _ = claude_p(world, world.repo, steps, "--allowedTools", "Bash")
    assert done.returncode == 0, done.stderr
    told = api.told()
    assert "coordd board unavailable (no coordd answers on" in told  # the session start
    # Claude Code 2.1.332 puts an allowed PreToolUse's additionalContext after the result.
    assert "PreToolUse:Edit hook additional context: coord: could not check reservations" in told
    assert "allowed UNCHECKED" in told and "Mention this to the user" in told
    assert free.read_text() == "# x\n"
    refused = api.tool_results()[4]
    assert "refused until it can" in refused and str(config) in refused, refused
    assert mine.read_text() == "# mine.py\n"

"""What real Claude Code (2.1.332, tests/hosts/package.json) shows the model of coord's
deny and of a write based on a stale read (issue 47 item 5); the wake is in
test_claude_messages.py (item 6). docs/HOSTS.md, "What the model sees", quotes these.

Found with the real binary: every PreToolUse refusal reaches the model as a failed
tool result "PreToolUse:Edit hook error: <reason>" (a JSON deny with or without a
reason, `decision: block`, exit 2, which adds the command in brackets): there is no
shape it shows as a plain refusal, so coord's deny adds a context line saying the
refusal is meant. And Claude Code refuses a Write (or an Edit whose text moved) to
a file changed since it was read by itself, before any hook runs, without saying who;
its PostToolUse on the re-read it asks for is where coord says who.
"""

from __future__ import annotations

import sys

from coordd_apps.hooks.respond import CLAUDE_DENY_CONTEXT, CLAUDE_DENY_NOTE
from coordd_client import Client
from hosts.fake_anthropic import FakeAnthropic, Say, Step, ToolCall
from hosts.test_claude import (
    RUN_TIMEOUT_S,
    Tmux,
    _eventually,
    approve_api_key,
    claude_p,
    set_up,
)
from hosts.test_claude_edits import OTHER_TAB
from hosts.world import World

#: Claude Code's own refusal of a write to a file changed since it was read (2.1.332).
MODIFIED_SINCE_READ = (
    "<tool_use_error>File has been modified since read, either by the user or by a linter."
    " Read it again before attempting to write it.</tool_use_error>"
)


def _system_texts(told: list[dict[str, object]]) -> list[str]:
    """The texts of the `system` messages Claude Code interleaves with the turns (a list
    of blocks in the request right after, a string in later ones)."""
    texts: list[str] = []
    for message in told:
        content = message.get("content")
        if message.get("role") != "system":
            continue
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [str(block.get("text", "")) for block in content if isinstance(block, dict)]
    return texts


def test_a_deny_is_a_hook_error_result_followed_by_coords_context(world: World) -> None:
    set_up(world)
    with Client(world.daemon.socket_path, agent="other-tab", project=str(world.repo)) as other:
        other.reserve(["src/owned.py"])
    owned = world.repo / "src" / "owned.py"
    steps: list[Step] = [
        ToolCall("Read", {"file_path": str(owned)}),
        ToolCall("Edit", {"file_path": str(owned), "old_string": "# owned.py", "new_string": "x"}),
        Say("done"),
    ]
    api, done, _ = claude_p(world, world.repo, steps)
    assert done.returncode == 0, done.stderr
    last = api.main_requests()[-1].body["messages"]
    results = [
        block
        for message in last
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    refused = results[-1]
    # The host's words, not coord's: a failed result labelled "hook error".
    assert refused["is_error"] is True
    assert str(refused["content"]).startswith("PreToolUse:Edit hook error: coord: "), refused
    assert "reserved" in str(refused["content"]) and "other-tab" in str(refused["content"])
    # Right after it, coord's own line says the refusal is meant.
    wanted = f"PreToolUse:Edit hook additional context: {CLAUDE_DENY_CONTEXT}"
    assert wanted in _system_texts(last), _system_texts(last)
    assert CLAUDE_DENY_NOTE not in api.told()  # the note is the user's
    assert owned.read_text() == "# owned.py\n"


def test_an_interactive_tab_shows_its_user_the_deny_with_coords_note(world: World) -> None:
    """What the person sees in the tab: the host's "Error: PreToolUse:Edit hook error:"
    line, and above it coord's `systemMessage` saying the refusal is meant."""
    set_up(world)
    approve_api_key(world)
    with Client(world.daemon.socket_path, agent="other-tab", project=str(world.repo)) as other:
        other.reserve(["src/owned.py"])
    owned = world.repo / "src" / "owned.py"
    steps: list[Step] = [
        ToolCall("Read", {"file_path": str(owned)}),
        ToolCall("Edit", {"file_path": str(owned), "old_string": "# owned.py", "new_string": "x"}),
        Say("refused"),
    ]
    with FakeAnthropic(steps) as api:
        flags = ("--permission-mode", "acceptEdits", "--allowedTools", "mcp__coord")
        tab = Tmux(world, api, *flags, "--", "edit the owned file")
        try:
            assert api.wait_for_main_requests(3, RUN_TIMEOUT_S), tab.screen()
            assert _eventually(lambda: "Error: PreToolUse:Edit hook error: coord:" in tab.screen())
            screen = " ".join(tab.screen().split())  # the tab wraps long lines
            assert f"PreToolUse:Edit says: {CLAUDE_DENY_NOTE}" in screen, screen
        finally:
            tab.close()


def test_a_stale_write_is_refused_by_claude_code_and_the_reread_names_who(
    world: World,
) -> None:
    set_up(world)
    free = world.repo / "src" / "free.py"
    script = world.root / "other_tab.py"
    script.write_text(OTHER_TAB)
    other_tab = f"{sys.executable} {script} {world.daemon.socket_path} {free} {world.repo}"
    steps: list[Step] = [
        ToolCall("Read", {"file_path": str(free)}),
        ToolCall("Bash", {"command": other_tab, "description": "the other tab edits"}),
        ToolCall("Write", {"file_path": str(free), "content": "# mine\n"}),  # stale
        ToolCall("Read", {"file_path": str(free)}),  # what the refusal asks for
        ToolCall("Write", {"file_path": str(free), "content": "# mine\n"}),
        Say("done"),
    ]
    api, done, _ = claude_p(world, world.repo, steps, "--allowedTools", "Bash")
    assert done.returncode == 0, done.stderr
    results = api.tool_results()
    # Claude Code's own refusal, before any hook: it cannot say who.
    assert results[2] == MODIFIED_SINCE_READ, results
    # The re-read's PostToolUse says who, right after what was read.
    texts = _system_texts(api.main_requests()[-1].body["messages"])
    said = [t for t in texts if t.startswith("PostToolUse:Read hook additional context: ")]
    assert len(said) == 1, texts  # the first read had nothing to say
    assert "coord: src/free.py was changed by other-tab at " in said[0], said
    assert "Z since you last read it" in said[0]
    assert free.read_text() == "# mine\n"  # the write after the re-read went through

"""One tab, one agent, with process trees shaped as the hosts make them.

A `FakeHost` is the tab: it runs hooks through `sh -c` (as Claude Code and
Codex do) and starts the MCP server as its own descendant, with each host's
environment for each surface (HOSTS.md, checked on the pinned versions).
The real hosts run the same scenarios in tests/hosts.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from coordd_client import Client
from coordd_client.identity import host_agent
from support import COORD, DaemonProcess, FakeHost, coord_env, git_repo

SESSION_A = "aaaaaaaa-1111-4f6e-8b5a-000000000001"
SESSION_B = "bbbbbbbb-2222-4f6e-8b5a-000000000002"
THREAD = "019d1afb-b2c7-7e21-9f00-123456789abc"

#: An MCP client the tab runs: it starts `coord mcp` as its child, calls one tool and
#: prints the JSON result (the host's own process is its parent, as in Codex's tree).
MCP_CLIENT = """
import json, sys, trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
async def main():
    env = json.loads(sys.argv[1])
    async with Client(StdioServerParameters(command=sys.argv[2], args=["mcp"], env=env)) as c:
        result = await c.call_tool(sys.argv[3], json.loads(sys.argv[4]))
        print(json.dumps(result.structured_content))
trio.run(main)
"""


def hook_payload(event: str, session: str, cwd: Path, **extra: str) -> str:
    return json.dumps({"session_id": session, "cwd": str(cwd), "hook_event_name": event, **extra})


def environ(daemon: DaemonProcess, home: Path, **extra: str) -> dict[str, str]:
    """A surface's environment; HOME is the test's, so is the tab registry under it."""
    return coord_env(
        daemon.socket_path, autostart=False, HOME=str(home), XDG_STATE_HOME=str(home / "x"), **extra
    )


def context_agent(output: str) -> str:
    text: str = json.loads(output)["hookSpecificOutput"]["additionalContext"]
    return text.split("you are ", 1)[1].split(maxsplit=1)[0]


def mcp_call(
    tab: FakeHost, env: dict[str, str], tool: str, **arguments: object
) -> dict[str, object]:
    done = tab.run(
        [sys.executable, "-c", MCP_CLIENT, json.dumps(env), COORD, tool, json.dumps(arguments)],
        env=env,
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


def test_a_claude_tab_stays_one_agent_across_clear(daemon: DaemonProcess, workdir: Path) -> None:
    repo = git_repo(workdir / "repo").resolve()
    home = workdir / "home"
    first = host_agent("claude", SESSION_A)
    with FakeHost() as tab:
        hooks_a = environ(daemon, home, CLAUDE_CODE_SESSION_ID=SESSION_A)
        start = [COORD, "hook", "session-start", "--host", "claude"]
        begun = tab.run(start, env=hooks_a, stdin=hook_payload("SessionStart", SESSION_A, repo))
        assert context_agent(begun.stdout) == first
        with Client(daemon.socket_path, agent=first, project=str(repo)) as client:
            held = client.claim(client.post("in progress").task.id).task
        # /clear: SessionEnd (reason clear), then SessionStart with a new session id. The
        # hooks and the shell now carry SESSION_B; the MCP server still has SESSION_A.
        hooks_b = environ(daemon, home, CLAUDE_CODE_SESSION_ID=SESSION_B)
        end = [COORD, "hook", "session-end", "--host", "claude"]
        cleared = hook_payload("SessionEnd", SESSION_A, repo, reason="clear")
        assert tab.run(end, env=hooks_a, stdin=cleared).returncode == 0
        again = tab.run(
            start, env=hooks_b, stdin=hook_payload("SessionStart", SESSION_B, repo, source="clear")
        )
        assert context_agent(again.stdout) == first
        shell = tab.run([COORD, "whoami", "--json"], env=hooks_b, cwd=repo)
        assert json.loads(shell.stdout)["agent"] == first, shell.stdout
        mcp = mcp_call(tab, environ(daemon, home, CLAUDE_CODE_SESSION_ID=SESSION_A), "whoami")
        assert mcp["agent"] == first
        with Client(daemon.socket_path, project=str(repo)) as look:
            assert look.get(held.id).task.claimed_by == first  # /clear kept the claim
        # The tab really ends (the user quits): what it held goes back.
        quit_ = hook_payload("SessionEnd", SESSION_B, repo, reason="prompt_input_exit")
        assert tab.run(end, env=hooks_b, stdin=quit_).returncode == 0
        with Client(daemon.socket_path, project=str(repo)) as look:
            assert look.get(held.id).task.state == "pending"
    # A new process is a new tab: a new session id gives a new name.
    with FakeHost() as other:
        hooks_c = environ(daemon, home, CLAUDE_CODE_SESSION_ID=SESSION_B)
        fresh = other.run(start, env=hooks_c, stdin=hook_payload("SessionStart", SESSION_B, repo))
        assert context_agent(fresh.stdout) == host_agent("claude", SESSION_B)


def test_a_codex_tabs_mcp_server_is_the_hooks_agent(daemon: DaemonProcess, workdir: Path) -> None:
    """Codex starts MCP servers with HOME, PATH, LANG and TERM only (no thread id): the
    server finds its tab's name in the registry, so its reservations are the tab's."""
    repo = git_repo(workdir / "repo").resolve()
    home = workdir / "home"
    tab_name = host_agent("codex", THREAD)
    with FakeHost() as tab:
        hooks = environ(daemon, home)
        start = [COORD, "hook", "session-start", "--host", "codex"]
        begun = tab.run(start, env=hooks, stdin=hook_payload("SessionStart", THREAD, repo))
        assert context_agent(begun.stdout) == tab_name
        reduced = {
            "HOME": str(home),
            "PATH": os.environ["PATH"],
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "COORDD_SOCKET": str(daemon.socket_path),
            "COORD_PROJECT": str(repo),
        }
        assert mcp_call(tab, reduced, "whoami")["agent"] == tab_name
        reserved = mcp_call(tab, reduced, "reserve_paths", patterns=["src/**"])
        assert reserved["reservations"], reserved
        patch = "*** Begin Patch\n*** Update File: src/a.py\n@@\n-a\n+b\n*** End Patch\n"
        edit = json.dumps(
            {
                "session_id": THREAD,
                "turn_id": "t1",
                "cwd": str(repo),
                "hook_event_name": "PreToolUse",
                "tool_name": "apply_patch",
                "tool_input": {"command": patch},
            }
        )
        guard = tab.run([COORD, "hook", "pre-edit", "--host", "codex"], env=hooks, stdin=edit)
        assert guard.returncode == 0, guard.stderr  # its own reservation: allowed
    with FakeHost() as stranger:  # another tab is denied the same file
        other = hook_payload("SessionStart", SESSION_A, repo)
        stranger.run(start, env=environ(daemon, home), stdin=other)
        denied = stranger.run(
            [COORD, "hook", "pre-edit", "--host", "codex"],
            env=environ(daemon, home),
            stdin=edit.replace(THREAD, SESSION_A),
        )
        assert denied.returncode == 2 and tab_name in denied.stderr

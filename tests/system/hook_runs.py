"""Running `coord hook ...` as a host does, for the hook tests (test_hooks.py,
test_guard_boards.py, test_messages_hooks.py): the recorded payloads, the hook's environment,
one run per tab, and the Stop hook's waiter started in the background."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from coordd_client.identity import host_agent
from support import COORD, coord_env, run_as_new_tab

FIXTURES = Path(__file__).parents[1] / "fixtures" / "hooks"
SESSION_A = "aaaaaaaa-1111-4f6e-8b5a-000000000001"
SESSION_B = "bbbbbbbb-2222-4f6e-8b5a-000000000002"
AGENT_A = host_agent("claude", SESSION_A)
AGENT_B = host_agent("claude", SESSION_B)


def payload(name: str, **values: str) -> str:
    """A recorded host payload with its placeholders (CWD, SESSION, FILE, PATCH) filled."""

    def fill(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: fill(v) for k, v in node.items()}
        if isinstance(node, list):
            return [fill(v) for v in node]
        if isinstance(node, str) and node in values:
            return values[node]
        return node

    return json.dumps(fill(json.loads((FIXTURES / f"{name}.json").read_text())))


def hook_env(socket: Path, **env: str) -> dict[str, str]:
    """A hook's environment: the test's own state directory (what was reported to whom)."""
    state = socket.parent / "state"
    return coord_env(socket, autostart=False, XDG_STATE_HOME=str(state), **env)


def hook(
    event: str, host: str, stdin: str, socket: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    """One hook run, by a host process of its own (so each call is its own tab)."""
    return run_as_new_tab(
        [COORD, "hook", event, "--host", host], env=hook_env(socket, **env), stdin=stdin
    )


def start_wake(
    socket_path: Path, repo: Path, session: str, max_wait: int = 60, **env: str
) -> subprocess.Popen[str]:
    """The Stop hook as Claude Code starts it with asyncRewake: in the background."""
    process = subprocess.Popen(
        [COORD, "hook", "wake", "--host", "claude", "--max-wait", str(max_wait)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=hook_env(socket_path, **env),
    )
    assert process.stdin is not None
    process.stdin.write(payload("claude-stop", CWD=str(repo), SESSION=session))
    process.stdin.close()
    process.stdin = None  # written and closed, as the host does; communicate() must not flush
    return process

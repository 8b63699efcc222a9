"""What the quick relay loads: the process a host starts for every `coord hook EVENT`
(before every edit of every tab) and every everyday command, when a warm quick server
takes the call (issue 46).

The relay is what runs per call; the server loaded the whole client once. So the relay
is guarded here by what it imports (`-X importtime` names every module, even one
imported after startup): the standard library's cheap parts and the few modules of
its own path, never the client, msgspec or a heavy package. What a hook costs as a
whole, on the quick path and in-process, is guarded as time by the benchmark
(`python -m bench.hooks`: each hook's p50 as a ratio to a bare `python -c pass`, and
its target, `bench.hooks.HOOK_RATIO_TARGET`), not by a count of the full client's
modules (issue 45 item 2).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from coordd_apps.quick.relay import QUICK_HOOKS
from support import COORD, DaemonProcess, coord_env, git_repo, quick_server_ready

#: The relay's own modules: the apps' package (which imports nothing), the command word,
#: the quick relay and where its socket is (the MCP relay's `place`, which names the
#: code by `coordd_wire.build`'s stamp), and the socket's location in the wire package
#: (which imports nothing either). Never the client library.
RELAY_OWN = frozenset(
    {
        "coordd_apps",
        "coordd_apps.entry",
        "coordd_apps.argv",
        "coordd_apps.quick",
        "coordd_apps.quick.relay",
        "coordd_apps.mcp_relay",
        "coordd_apps.mcp_relay.place",
        "coordd_wire",
        "coordd_wire.build",
        "coordd_wire.location",
    }
)
#: Our top-level packages: what the relay loads of them is `RELAY_OWN` at most.
OURS = ("coordd_wire", "coordd_client", "coordd_apps")
#: Modules beyond a bare interpreter's the relay may load in all: its own and the
#: standard library's C parts it talks through (_json, _socket, _signal, fcntl, ...).
RELAY_MODULES = 24
#: What the relay must never load: the client's wire codec and the heavy packages
#: (each costs a bare interpreter's start or more).
HEAVY = ("msgspec", "trio", "mcp", "pydantic", "anyio", "textual", "tomlkit", "psycopg", "argparse")
SESSION = "cccccccc-3333-4f6e-8b5a-000000000003"


def imported(stderr: str) -> set[str]:
    return {
        line.rsplit("|", 1)[-1].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:") and "imported package" not in line
    }


@pytest.mark.timeout(300)
def test_the_quick_relay_of_every_hook_loads_only_its_own_few_modules(
    daemon: DaemonProcess, workdir: Path
) -> None:
    repo = git_repo(workdir / "repo").resolve()
    (repo / "a.py").write_text("a = 1\n")
    subprocess.run(["git", "-C", str(repo), "add", "a.py"], check=True)
    home = workdir / "home"
    home.mkdir()
    env = coord_env(
        daemon.socket_path, HOME=str(home), XDG_STATE_HOME=str(workdir / "state"),
        COORD_QUICK="1",
    )  # fmt: skip
    first = subprocess.run(
        [COORD, "whoami"], env=env, cwd=repo, capture_output=True, check=False, timeout=60
    )
    assert first.returncode == 0, first
    quick_server_ready(daemon.socket_path.parent)
    env["COORD_QUICK"] = "require"
    bare = imported(
        subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "pass"],
            capture_output=True, text=True, check=True,
        ).stderr
    )  # fmt: skip
    base = {"session_id": SESSION, "cwd": str(repo)}
    edit = {"tool_name": "Edit", "tool_input": {"file_path": str(repo / "a.py")}}
    stdin = {
        "session-start": {**base, "hook_event_name": "SessionStart"},
        "pre-edit": {**base, "hook_event_name": "PreToolUse", **edit},
        "post-tool": {**base, "hook_event_name": "PostToolUse", **edit},
        "session-end": {**base, "hook_event_name": "SessionEnd", "reason": "other"},
        "deliver": {**base, "hook_event_name": "UserPromptSubmit", "prompt": "go on"},
        "turn-end": {**base, "hook_event_name": "Stop", "stop_hook_active": False},
    }
    assert set(stdin) | {"pre-commit"} == QUICK_HOOKS  # `wake` waits in-process
    for event in sorted(QUICK_HOOKS):
        argv = [sys.executable, "-X", "importtime", COORD, "hook", event]
        argv += [] if event == "pre-commit" else ["--host", "claude"]
        given = stdin.get(event)
        done = subprocess.run(
            argv, input=json.dumps(given) if given else "", capture_output=True, text=True,
            env=env, cwd=repo, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (event, done.stderr[-2000:])
        names = imported(done.stderr)
        assert "coordd_apps.quick.relay" in names, event  # the relay ran, not the CLI
        heavy = sorted(n for n in names if n.split(".")[0] in HEAVY)
        assert heavy == [], (event, heavy)
        ours = sorted(n for n in names if n.split(".")[0] in OURS)
        assert set(ours) <= RELAY_OWN, (event, ours)
        extra = names - bare
        assert len(extra) <= RELAY_MODULES, (event, len(extra), sorted(extra))

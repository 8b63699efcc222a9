"""What a hook costs its host, counted, not timed: the modules `coord hook EVENT` imports
when a host runs it (a fresh process, before every edit of every tab; issue 32).

Each hook runs for real (its stdin JSON, a real daemon, a real git repository, the
console script pip writes) under `python -X importtime`, which names every module
the process imported. No heavy package may be among them, nor the CLI's parser and
registry, and the total stays under a stated cap: a new import on the hook path
fails here, not in a benchmark nobody reads.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from coordd_client import Client
from support import COORD, DaemonProcess, coord_env, git_repo

#: Packages no hook needs, each tens of modules: the MCP SDK and what it stands on,
#: the TUI, TOML editing, the PostgreSQL driver, trio, and argparse (the fast path
#: in `hooks/entry.py` reads a hook's few options itself).
HEAVY = ("trio", "mcp", "pydantic", "anyio", "textual", "tomlkit", "psycopg", "argparse")
#: The CLI's own modules a hook must not load (its parser, registry, context, groups),
#: and what only session start needs (it may start a daemon, and renders the board).
CLI_ONLY = ("coordd_client.cli.",)
START_ONLY = ("coordd_client.autostart", "coordd_client.render", "coordd_client.summary")
#: Modules a hook may import in all, Python's own start (27) included. Measured in the
#: dev venv: 139 to 141 for pre-edit, pre-commit, session-end and wake, 156 for session
#: start (its summary, and autostart); a plain `pip install coordd-client` loads about
#: 10 fewer (no typing_extensions, which brings `inspect`). Before issue 32: 213 each.
#: Issue 33 added 2 to every hook (section 11's wire types and builders, which every
#: client carries) and 2 more to the edit hooks (`hooks.files`, `hooks.edits`): 152 for
#: pre-edit and post-tool, 151 for wake; 166 to 168 for session start (its board lists
#: others' edits through `hooks.files`). Issue 43 added 1 to the hooks that find the
#: daemon (`protocol.rendezvous`, read before a derived socket is used): 153 for wake,
#: 156 for post-tool. Issue 45 added 1 to every hook (`coordd_client.argv`, the command
#: word, moved out of `entry` so that the CLI no longer imports its entry point back).
#: Issue 45 item 1 added 1 to every hook (`protocol.method_table`, the one table of
#: RPCs the builders read; its Structs load lazily): 158 for pre-edit and post-tool,
#: 155 for wake; the others were under their caps already. Issue 47 added 1 to session
#: end and session start (`coordd_client.advice`, the one place a count or a refusal is
#: worded: session end reports what it released, session start the board): 155, 173.
#: What a hook costs is now measured as time (issue 46: `python -m bench.hooks`, each
#: hook's p50 over a bare start, on the quick path and in-process); this count only
#: keeps the in-process path from drifting unseen.
CAP = {"pre-edit": 158, "pre-commit": 154, "session-end": 155, "wake": 155, "session-start": 173,
       "post-tool": 158}  # fmt: skip
SESSION = "cccccccc-3333-4f6e-8b5a-000000000003"


def imported(event: str, stdin: str, env: dict[str, str], cwd: Path) -> set[str]:
    """The modules `coord hook EVENT` imported, from `-X importtime` (every import, even
    one made after startup; a failed attempt such as an optional `nt` is counted too)."""
    argv = [sys.executable, "-X", "importtime", COORD, "hook", event]
    argv += [] if event == "pre-commit" else ["--host", "claude"]
    argv += ["--max-wait", "0"] if event == "wake" else []
    done = subprocess.run(
        argv, input=stdin, capture_output=True, text=True, env=env, cwd=cwd, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    names = {
        line.rsplit("|", 1)[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "imported package" not in line
    }
    assert len(names) > 20, done.stderr[-2000:]  # the profile was read at all
    return names


@pytest.mark.parametrize("event", list(CAP))
def test_a_hook_loads_no_heavy_package_and_few_modules(
    event: str, daemon: DaemonProcess, workdir: Path
) -> None:
    repo = git_repo(workdir / "repo").resolve()
    (repo / "a.py").write_text("a = 1\n")
    subprocess.run(["git", "-C", str(repo), "add", "a.py"], check=True)
    with Client(daemon.socket_path, agent="other", project=str(repo)) as other:
        other.reserve(["docs/**"])  # the guard asks the daemon for real
        other.post("some work")
    base = {"session_id": SESSION, "cwd": str(repo)}
    stdin = {
        "session-start": {**base, "hook_event_name": "SessionStart"},
        "pre-edit": {**base, "hook_event_name": "PreToolUse", "tool_name": "Edit",
                     "tool_input": {"file_path": str(repo / "a.py")}},
        "post-tool": {**base, "hook_event_name": "PostToolUse", "tool_name": "Edit",
                      "tool_input": {"file_path": str(repo / "a.py")}},
        "session-end": {**base, "hook_event_name": "SessionEnd", "reason": "other"},
        "wake": {**base, "hook_event_name": "Stop"},
    }.get(event)  # fmt: skip
    # A HOME of its own: session start records the tab (the host process: this pytest
    # process) in HOME's state directory, where every later hook of the run would find it.
    home = workdir / "home"
    home.mkdir()
    env = coord_env(daemon.socket_path, HOME=str(home), XDG_STATE_HOME=str(workdir / "state"))
    env["CLAUDE_CODE_SESSION_ATTENDED"] = "1"  # wake looks at the board, then exits at 0 s
    names = imported(event, json.dumps(stdin) if stdin else "", env, repo)
    heavy = sorted(n for n in names if n.split(".")[0] in HEAVY)
    assert heavy == [], heavy
    unneeded = () if event == "session-start" else START_ONLY
    cli = sorted(n for n in names if n.startswith(CLI_ONLY) or n in unneeded)
    assert cli == [], cli
    assert "coordd_client.hooks.entry" in names  # the fast path ran, not argparse's
    assert len(names) <= CAP[event], (len(names), sorted(names))

"""`coord doctor` against the real Claude Code and Codex (tests/hosts/package.json).

Doctor needs no model: `claude mcp list` health-checks the servers itself and
`codex app-server` answers `hooks/list` and `mcpServerStatus/list` offline.
Codex still wants a provider configured, so its home gets the offline config
that points at the fake Responses API (never called here).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hosts.codex_home import write_codex_home
from hosts.world import CLAUDE, CODEX, World, require
from support import COORD, SHARED_TMP_SOCKET

pytestmark = SHARED_TMP_SOCKET

#: `claude mcp list` takes about 20 s on the 2-core machine (`doctor --wait` allows it 60).
DOCTOR_TIMEOUT_S = 150


def doctor(
    world: World, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [COORD, "doctor", *args],
        cwd=world.repo,
        env=env or world.env,
        capture_output=True,
        text=True,
        timeout=DOCTOR_TIMEOUT_S,
        check=False,
    )


def report(world: World, *args: str) -> dict[str, Any]:
    done = doctor(world, "--json", *args)
    document: dict[str, Any] = json.loads(done.stdout)
    assert done.returncode == (0 if document["ok"] else 1)
    return document


def checks(document: dict[str, Any], section: str) -> list[dict[str, Any]]:
    return [c for c in document["checks"] if c["section"] == section]


def offline_codex(world: World) -> None:
    # An unreachable provider: doctor must never call the model.
    write_codex_home(world.home / ".codex", "http://127.0.0.1:9/v1")


def set_up(world: World) -> None:
    world.trust_claude_folder(world.repo)
    offline_codex(world)
    for host in ("claude", "codex", "git"):
        done = world.coord("setup", host)
        assert done.returncode == 0, done.stderr


def trust_codex_hooks(world: World, hooks: list[dict[str, Any]]) -> None:
    """What reviewing them in Codex's /hooks records: each hook's key and trusted hash."""
    config = world.home / ".codex" / "config.toml"
    tables = "".join(
        f'\n[hooks.state."{hook["key"]}"]\ntrusted_hash = "{hook["hash"]}"\n' for hook in hooks
    )
    config.write_text(config.read_text() + tables)


@pytest.mark.timeout(300)
def test_before_setup_it_names_both_setup_commands(world: World) -> None:
    offline_codex(world)
    done = doctor(world)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "coord setup claude" in done.stdout
    assert "coord setup codex" in done.stdout
    assert f"pid {world.daemon.pid}" in done.stdout, done.stdout
    assert "reduced environment" in done.stdout and "same daemon" in done.stdout


@pytest.mark.timeout(400)
def test_after_setup_it_reports_connected_and_the_trust_of_codex_hooks(world: World) -> None:
    set_up(world)
    first = report(world, "--wait")  # Claude Code's own verdict, however long it takes
    assert not first["ok"]
    claude = {c["check"]: c for c in checks(first, "claude")}
    assert claude["mcp server"]["status"] == "ok" and claude["mcp server"]["state"] == "Connected"
    assert claude["hooks"]["status"] == "ok", claude["hooks"]
    codex = checks(first, "codex")
    hooks = [c["hook"] for c in codex if c["check"].startswith("hook ")]
    assert sorted(h["event"] for h in hooks) == [
        "postToolUse", "preToolUse", "sessionEnd", "sessionStart", "stop", "userPromptSubmit"
    ]  # fmt: skip
    assert {h["trust"] for h in hooks} == {"untrusted"}
    assert all(Path(h["source"]) == world.home / ".codex" / "hooks.json" for h in hooks)
    assert first["fixes"] == ["open Codex and review coord's hooks in /hooks"]
    # One cause, however many checks it fails (issue 47 item 11: it was eight "problems").
    assert first["problems"] == 1 and first["failed_checks"] >= len(hooks), first
    server = next(c for c in codex if c["check"] == "mcp server")
    assert server["status"] == "ok", server

    trust_codex_hooks(world, hooks)
    done = doctor(world)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "untrusted" not in done.stdout
    assert done.stdout.count(": trusted") == len(hooks), done.stdout  # its six hooks
    assert "nothing missing" in done.stdout
    # A worktree made after setup is covered too (user scope).
    later = world.worktree("later")
    again = report(world)
    trees = {c["check"]: c for c in checks(again, "worktrees")}
    assert trees[str(later)]["claude"]["covered"] and trees[str(later)]["codex"]["covered"]
    assert trees[str(later)]["git_guard"]["on"]  # the hooks directory every worktree shares
    assert again["ok"], again


@pytest.mark.timeout(300)
def test_json_is_one_document(world: World) -> None:
    offline_codex(world)
    done = doctor(world, "--json")
    assert done.returncode == 1
    document = json.loads(done.stdout)
    assert document["ok"] is False and document["problems"] >= 2
    assert {"coord setup claude", "coord setup codex"} <= set(document["fixes"])
    daemon = checks(document, "daemon")
    assert daemon[0]["pid"] == world.daemon.pid
    assert daemon[1]["pid"] == world.daemon.pid  # the reduced environment's


def test_a_host_missing_from_path_is_skipped(world: World) -> None:
    bin_dir = os.path.dirname(COORD)
    env = {**world.env, "PATH": os.pathsep.join([bin_dir, "/usr/bin", "/bin"])}
    assert world.coord("setup", "git").returncode == 0
    done = doctor(world, env=env)
    assert "claude: not installed, skipped" in done.stdout, done.stdout
    assert "codex: not installed, skipped" in done.stdout
    # Nothing else is missing: the daemon answers, no host is installed, commits are guarded.
    assert done.returncode == 0, done.stdout
    # A relative core.hooksPath (husky's) is resolved in each worktree: a linked one has
    # no guard there, and doctor says so.
    linked = world.worktree("linked")
    world.git("config", "core.hooksPath", ".hooks")
    unguarded = doctor(world, env=env)
    assert unguarded.returncode == 1 and "git guard NOT on" in unguarded.stdout, unguarded.stdout
    assert str(linked) in unguarded.stdout


@pytest.mark.timeout(300)
def test_a_codex_config_it_cannot_load_is_named_not_sent_back_to_setup(world: World) -> None:
    # `coord setup codex` refuses a file it cannot parse, so it cannot be the fix for one.
    offline_codex(world)
    config = world.home / ".codex" / "config.toml"
    config.write_text(config.read_text() + '\n[mcp_servers.x]\ncommand = "a"\n[mcp_servers.x]\n')
    refused = world.coord("setup", "codex")
    assert refused.returncode == 1 and "nothing was written" in refused.stderr, refused.stderr
    only_codex = Path(world.root / "only-codex")
    only_codex.mkdir()
    (only_codex / "codex").symlink_to(require(CODEX))
    path = os.pathsep.join([os.path.dirname(COORD), str(only_codex), "/usr/bin", "/bin"])
    document = json.loads(doctor(world, "--json", env={**world.env, "PATH": path}).stdout)
    server = next(c for c in checks(document, "codex") if c["check"] == "mcp server")
    assert server["status"] != "ok" and str(config) in server["detail"], server
    assert server["fix"] != "coord setup codex", server
    assert "correct the Codex configuration file" in server["fix"], server


@pytest.mark.timeout(300)
def test_without_wait_claude_code_s_server_is_judged_by_its_start(world: World) -> None:
    """`claude mcp list` waits on the network first: the doctor does not wait with it,
    and says the server is in order from its start as Claude Code starts it, which the
    boards section made; no `claude` it started is left running."""
    set_up(world)
    document = report(world)
    claude = {c["check"]: c for c in checks(document, "claude")}
    server = claude["mcp server"]
    assert server["status"] == "ok", server
    assert server["state"] in ("Connected", "Started"), server
    boards = [c for c in checks(document, "boards") if c.get("surface") == "claude"]
    assert boards and boards[0]["status"] == "ok", boards
    if server["state"] == "Started":
        assert server["board_id"] == boards[0]["board_id"]
        assert "coord doctor --wait" in server["detail"]
    left = subprocess.run(
        ["pgrep", "-f", f"{CLAUDE} mcp list"], capture_output=True, text=True, check=False
    )
    assert left.stdout.split() == [], "doctor left `claude mcp list` running"

"""Driving real Codex 0.171.0: `codex exec` against the fake Responses API, and the
trust review of hooks that a user does once in `/hooks`, done through `codex app-server`."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from hosts.codex_home import write_codex_home
from hosts.fake_openai import FakeResponsesAPI
from hosts.responses_wire import Step
from hosts.world import CODEX, World, require

RUN_TIMEOUT_S = 180


def configure(world: World, fake: FakeResponsesAPI) -> Path:
    """The offline Codex config (provider, model, no telemetry), before `coord setup codex`."""
    return write_codex_home(world.home / ".codex", fake.base_url)


def list_hooks(world: World, cwd: Path) -> list[dict[str, Any]]:
    """`hooks/list` of `codex app-server` (JSON-RPC over stdio): each hook with its trust."""
    with subprocess.Popen(
        [require(CODEX), "app-server"],
        cwd=cwd,
        env=world.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        try:
            for message in (
                {
                    "id": 1,
                    "method": "initialize",
                    "params": {"clientInfo": {"name": "t", "version": "0"}},
                },
                {"method": "initialized"},
                {"id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
            ):
                proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
                proc.stdin.flush()
            deadline = time.monotonic() + RUN_TIMEOUT_S
            while time.monotonic() < deadline:
                line = proc.stdout.readline()
                assert line, "codex app-server closed its stdout before answering hooks/list"
                reply = json.loads(line)
                if reply.get("id") == 2:
                    assert "result" in reply, reply
                    return [hook for item in reply["result"]["data"] for hook in item["hooks"]]
            raise AssertionError("no hooks/list answer in time")
        finally:
            proc.terminate()


def trust_hooks(world: World, cwd: Path) -> list[dict[str, Any]]:
    """What a review in `/hooks` records: each hook's current hash, as trusted."""
    listed = list_hooks(world, cwd)
    with (world.home / ".codex" / "config.toml").open("a") as config:
        for hook in listed:
            config.write(
                f'\n[hooks.state."{hook["key"]}"]\ntrusted_hash = "{hook["currentHash"]}"\n'
            )
    return listed


def codex_exec(world: World, cwd: Path, fake: FakeResponsesAPI) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [require(CODEX), "exec", "--skip-git-repo-check", "work on the board"],
        cwd=cwd,
        env=world.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )


__all__ = ["Step", "codex_exec", "configure", "list_hooks", "trust_hooks"]

"""What a host tells a hook on stdin, reduced to what the hooks need.

Claude Code, Codex and Cursor each send one JSON object (HOSTS.md section 3):
the session (`session_id`; Cursor: `conversation_id`), the working directory,
and for a tool event the tool's name and input. The agent is named as the MCP
server and the CLI name it: `$COORD_AGENT`, else `<host>-` and the first 12
hex digits of the session id, so a tab's reservations are its own.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from coordd_client.hooks.patch import patch_paths
from coordd_client.identity import (
    AGENT_ENV,
    Resolved,
    host_agent,
    host_project,
    resolve_agent,
)

Host = Literal["claude", "codex", "cursor"]
HOSTS: tuple[Host, ...] = ("claude", "codex", "cursor")

#: Where each host's edit tools put the file they change.
_PATH_KEYS = ("file_path", "notebook_path", "path", "target_file")


@dataclass
class HookInput:
    host: Host
    raw: dict[str, Any]
    agent: Resolved
    project: Resolved
    cwd: str
    paths: list[str] = field(default_factory=list)


def read(text: str, host: Host | None, environ: Mapping[str, str] | None = None) -> HookInput:
    """Parse a hook's stdin; a missing or broken payload still yields a usable input."""
    env = os.environ if environ is None else environ
    try:
        raw = json.loads(text) if text.strip() else {}
    except ValueError:
        raw = {}
    if not isinstance(raw, dict):
        raw = {}
    chosen = host or guess_host(raw)
    cwd = raw.get("cwd") if isinstance(raw.get("cwd"), str) else None
    if cwd is None:
        roots = raw.get("workspace_roots")
        cwd = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None
    cwd = cwd or os.getcwd()
    return HookInput(
        host=chosen,
        raw=raw,
        agent=agent_of(chosen, raw, env),
        project=host_project(env, cwd),
        cwd=cwd,
        paths=edited_paths(raw),
    )


def guess_host(raw: Mapping[str, Any]) -> Host:
    if "conversation_id" in raw or "workspace_roots" in raw:
        return "cursor"
    if "turn_id" in raw or raw.get("tool_name") == "apply_patch":
        return "codex"
    return "claude"


def agent_of(host: Host, raw: Mapping[str, Any], env: Mapping[str, str]) -> Resolved:
    if env.get(AGENT_ENV):
        return Resolved(env[AGENT_ENV], f"${AGENT_ENV}")
    session = raw.get("conversation_id" if host == "cursor" else "session_id")
    if isinstance(session, str) and session:
        key = "conversation_id" if host == "cursor" else "session_id"
        return Resolved(host_agent(host, session), f"the hook's {key}")
    return resolve_agent(None, env)


def edited_paths(raw: Mapping[str, Any]) -> list[str]:
    """The files a tool call is about to change (none for other events)."""
    tool_input = raw.get("tool_input")
    if not isinstance(tool_input, dict):
        return []
    paths: list[str] = []
    for key in _PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            paths.append(value)
    command = tool_input.get("command") or tool_input.get("patch") or tool_input.get("input")
    if raw.get("tool_name") in ("apply_patch", "Edit", "Write") and isinstance(command, str):
        paths += patch_paths(command)
    edits = tool_input.get("edits")
    if isinstance(edits, list):  # MultiEdit-style inputs naming files per edit
        for edit in edits:
            if isinstance(edit, dict) and isinstance(edit.get("file_path"), str):
                paths.append(edit["file_path"])
    return list(dict.fromkeys(paths))

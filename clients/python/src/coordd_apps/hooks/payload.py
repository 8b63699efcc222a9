"""What a host tells a hook on stdin, reduced to what the hooks need.

Claude Code, Codex and Cursor each send one JSON object (HOSTS.md section 3):
the session (`session_id`; Cursor: `conversation_id`), the working directory,
and for a tool event the tool's name and input. The agent is named by
`identity.identify`, as the MCP server and the CLI name it, so a tab's
reservations are its own.

Which host is calling is read from the payload when it says so, not only
from `--host`: Cursor also runs the hooks of `.claude/settings.json`, and a
Claude-registered hook fed a Cursor window's payload must act as that
window's agent, or it would deny the window its own reserved files.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from coordd_apps.hooks.patch import patch_paths
from coordd_client.identity import (
    Resolved,
    host_project,
    identify,
    resolve_agent,
)

Host = Literal["claude", "codex", "cursor"]
HOSTS: tuple[Host, ...] = ("claude", "codex", "cursor")

#: Where each host's edit tools put the file they change.
_PATH_KEYS = ("file_path", "notebook_path", "path", "target_file")


class HookInput(msgspec.Struct):
    host: Host
    raw: dict[str, Any]
    agent: Resolved
    project: Resolved
    cwd: str
    paths: list[str] = msgspec.field(default_factory=list)


def read(
    text: str,
    host: Host | None,
    environ: Mapping[str, str] | None = None,
    *,
    agent: str | None = None,
    project: str | None = None,
) -> HookInput:
    """Parse a hook's stdin; a missing or broken payload still yields a usable input.

    `agent` and `project` are the command line's `--agent` and `--project`.
    """
    env = os.environ if environ is None else environ
    try:
        raw = json.loads(text) if text.strip() else {}
    except ValueError:
        raw = {}
    if not isinstance(raw, dict):
        raw = {}
    chosen = said_by_payload(raw) or host or "claude"
    roots = raw.get("workspace_roots")
    first = roots[0] if isinstance(roots, list) and roots else None
    # A directory named with a NUL byte names no directory (and os and subprocess
    # raise on one): it counts as not given, like any other broken field.
    workspace = first if isinstance(first, str) and "\0" not in first else None
    cwd = raw.get("cwd") if isinstance(raw.get("cwd"), str) else None
    cwd = cwd if cwd is not None and "\0" not in cwd else None
    cwd = cwd or workspace or os.getcwd()
    return HookInput(
        host=chosen,
        raw=raw,
        agent=agent_of(chosen, raw, env, explicit=agent, workspace=workspace),
        project=Resolved(project, "--project") if project else host_project(env, cwd),
        cwd=cwd,
        paths=edited_paths(raw),
    )


def said_by_payload(raw: Mapping[str, Any]) -> Host | None:
    """The host whose payload this is, where its fields tell (None: they do not)."""
    if any(key in raw for key in ("conversation_id", "workspace_roots", "cursor_version")):
        return "cursor"
    if "turn_id" in raw or raw.get("tool_name") == "apply_patch":
        return "codex"
    return None


def agent_of(
    host: Host,
    raw: Mapping[str, Any],
    env: Mapping[str, str],
    *,
    explicit: str | None = None,
    workspace: str | None = None,
) -> Resolved:
    session = raw.get("session_id")
    found = identify(
        explicit=explicit,
        environ=env,
        host=host,
        session=session if isinstance(session, str) else None,
        workspace=workspace,
    )
    return found or resolve_agent(None, env)


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

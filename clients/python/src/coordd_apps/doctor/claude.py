"""The Claude Code checks: `claude mcp list` (it health-checks the servers, no model
needed) and the hooks `coord setup claude` registers, in the settings files that
apply to a worktree; `claude_coverage` asks the same of each worktree.

The settings files are read rather than asked of Claude Code because it has no
command that lists hooks; the MCP server is asked of `claude mcp list` because
only Claude Code knows whether it actually connects.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from coordd_apps.doctor.findings import Finding, HostFailed
from coordd_apps.setup.hosts import SERVER_KEY

#: `claude mcp list` starts and health-checks every server; 2.1.332 takes about 20 s
#: on a machine without network even with none configured (it retries its DNS lookups
#: of api.anthropic.com first). `coord doctor --wait` gives it this long.
CLAUDE_TIMEOUT_S = 60.0
#: How long `coord doctor` gives it by default, counted from its start, which is the
#: doctor's own: it runs while the other checks do. Past it, the server's finding is
#: the boards section's start of the same server in the same environment; with no such
#: start to judge by, `claude mcp list` gets `CLAUDE_TIMEOUT_S`.
CLAUDE_WAIT_S = 3.0

#: The hooks `coord setup claude` registers: settings event -> `coord hook` sub-command.
CLAUDE_HOOKS = {
    "SessionStart": "session-start",
    "PreToolUse": "pre-edit",
    "PostToolUse": "post-tool",  # edits and reads recorded (issue 33), then messages
    "UserPromptSubmit": "deliver",  # unread messages into the turn (issue 34)
    "Stop": "wake",
    "SessionEnd": "session-end",
}


# -- settings files -------------------------------------------------------------------


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _coord_hook(command: Any, sub: str) -> bool:
    return isinstance(command, str) and "coord" in command and f"hook {sub}" in command


def claude_settings_files(home: Path, top: Path) -> list[Path]:
    """The settings files Claude Code reads in worktree `top` (user, project, local)."""
    return [
        home / ".claude" / "settings.json",
        top / ".claude" / "settings.json",
        top / ".claude" / "settings.local.json",
    ]


def claude_hooks_found(files: Iterable[Path]) -> dict[str, list[str]]:
    """Each event of `CLAUDE_HOOKS` -> the files that register coord's hook for it."""
    found: dict[str, list[str]] = {event: [] for event in CLAUDE_HOOKS}
    for path in files:
        doc = _read_json(path)
        hooks = doc.get("hooks") if isinstance(doc, dict) else None
        if not isinstance(hooks, dict):
            continue
        for event, sub in CLAUDE_HOOKS.items():
            groups = hooks.get(event)
            for group in groups if isinstance(groups, list) else []:
                handlers = group.get("hooks") if isinstance(group, dict) else None
                for handler in handlers if isinstance(handlers, list) else []:
                    ours = isinstance(handler, dict) and _coord_hook(handler.get("command"), sub)
                    if ours and str(path) not in found[event]:
                        found[event].append(str(path))
    return found


def claude_server_scope(home: Path, top: Path) -> str | None:
    """Where coord's MCP server is registered for worktree `top`: "user", "local"
    (~/.claude.json for this folder), "worktree" (its .mcp.json), or None."""
    config = _read_json(home / ".claude.json")
    if isinstance(config, dict):
        if SERVER_KEY in (config.get("mcpServers") or {}):
            return "user"
        project = (config.get("projects") or {}).get(str(top)) or {}
        if isinstance(project, dict) and SERVER_KEY in (project.get("mcpServers") or {}):
            return "local"
    project_file = _read_json(top / ".mcp.json")
    if isinstance(project_file, dict) and SERVER_KEY in (project_file.get("mcpServers") or {}):
        return "worktree"
    return None


def _event_label(event: str) -> str:
    return "Stop (wake)" if event == "Stop" else event


# -- Claude Code ----------------------------------------------------------------------


def claude_server_status(output: str) -> str | None:
    """coord's status in `claude mcp list`'s output ("✔ Connected"), or None if absent."""
    for line in output.splitlines():
        if line.startswith(f"{SERVER_KEY}:"):
            return line.rsplit(" - ", 1)[-1].strip() if " - " in line else line
    return None


def check_claude(
    listed: subprocess.CompletedProcess[str] | HostFailed,
    top: Path,
    home: Path,
    started: Finding | None = None,
    waited_out: bool = False,
) -> list[Finding]:
    """The MCP server's finding from `claude mcp list`'s answer (`listed`) and the hooks'.

    `started` is the boards section's finding for Claude Code's surface (its server,
    started as Claude Code starts it, asked `whoami`); when `claude mcp list` was cut
    short by the doctor's own wait (`waited_out`), that start is the evidence instead.
    """
    findings = [_server_finding(listed, top, home, started, waited_out)]
    fix = "coord setup claude"
    found = claude_hooks_found(claude_settings_files(home, top))
    missing = [_event_label(event) for event, files in found.items() if not files]
    data = {"hooks": found}
    if missing:
        where = ", ".join(str(p) for p in claude_settings_files(home, top))
        findings.append(
            Finding(
                "claude",
                "hooks",
                False,
                f"missing coord hooks: {', '.join(missing)} (in none of {where})",
                fix,
                data=data,
            )
        )
    else:
        files = sorted({f for paths in found.values() for f in paths})
        findings.append(
            Finding(
                "claude",
                "hooks",
                True,
                f"{', '.join(map(_event_label, CLAUDE_HOOKS))} in {', '.join(files)}",
                data=data,
            )
        )
    return findings


def _server_finding(
    listed: subprocess.CompletedProcess[str] | HostFailed,
    top: Path,
    home: Path,
    started: Finding | None,
    waited_out: bool,
) -> Finding:
    fix = "coord setup claude"
    if isinstance(listed, HostFailed):
        if waited_out and started is not None and not started.data.get("failed"):
            return _started_finding(str(listed), top, home, started)
        return Finding("claude", "mcp server", False, str(listed), "claude mcp list")
    status = claude_server_status(listed.stdout)
    if status is None:
        return Finding(
            "claude", "mcp server", False, "coord is not listed by `claude mcp list`", fix
        )
    state = status.lstrip("✔✗⚠! ").strip()
    ok = "connected" in state.lower()
    if ok:
        fix_now = None
    elif "approv" in state.lower():
        fix_now = APPROVE_FIX
    else:
        fix_now = "run `claude mcp get coord` and `coord mcp` by hand to see why"
    detail = f"coord: {state} (claude mcp list)"
    return Finding("claude", "mcp server", ok, detail, fix_now, data={"state": state})


APPROVE_FIX = "start Claude Code here and approve the coord server (or /mcp)"


def _started_finding(why: str, top: Path, home: Path, started: Finding) -> Finding:
    """`claude mcp list` is still on its way (it waits on the network before it checks
    a server): what it would have said, from what it reads and what the boards
    section saw. The server's entry is Claude Code's own (`hostenv.claude_entry`), its
    start is the boards probe's, and a worktree's `.mcp.json` server needs approval."""
    scope = claude_server_scope(home, top)
    if scope is None:
        detail = "coord is not registered for this folder (~/.claude.json, .mcp.json)"
        return Finding("claude", "mcp server", False, detail, "coord setup claude")
    board = started.data.get("board_id")
    data: dict[str, Any] = {"state": "Started", "scope": scope, "listed": why, "board_id": board}
    if scope == "worktree" and not mcpjson_approved(home, top):
        detail = f"coord ({top / '.mcp.json'}): needs approval; {why}"
        return Finding("claude", "mcp server", False, detail, APPROVE_FIX, data=data)
    detail = (
        f"coord: {scope} scope, starts and answers as Claude Code starts it (boards, above);"
        f" {why}, so `coord doctor --wait` asks it to the end"
    )
    return Finding("claude", "mcp server", True, detail, data=data)


def mcpjson_approved(home: Path, top: Path) -> bool:
    """Whether Claude Code runs coord's server from the worktree's `.mcp.json`: approved
    in a settings file or in this folder's entry of ~/.claude.json."""
    config = _read_json(home / ".claude.json")
    project = (config.get("projects") or {}).get(str(top)) if isinstance(config, dict) else None
    places = [project, *(_read_json(p) for p in claude_settings_files(home, top))]
    for doc in places:
        if not isinstance(doc, dict):
            continue
        if SERVER_KEY in (doc.get("disabledMcpjsonServers") or []):
            return False
        if doc.get("enableAllProjectMcpServers") is True:
            return True
        if SERVER_KEY in (doc.get("enabledMcpjsonServers") or []):
            return True
    return False


def claude_coverage(home: Path, top: Path) -> tuple[bool, str]:
    scope = claude_server_scope(home, top)
    user_files = claude_settings_files(home, top)[:1]
    all_found = claude_hooks_found(claude_settings_files(home, top))
    user_found = claude_hooks_found(user_files)
    missing = [_event_label(e) for e, files in all_found.items() if not files]
    parts = []
    if scope is None:
        parts.append("no coord MCP server")
    if missing:
        parts.append(f"no hooks {', '.join(missing)}")
    if parts:
        return False, "; ".join(parts)
    hooks_scope = "user" if all(user_found.values()) else "worktree"
    if scope == "user" and hooks_scope == "user":
        return True, "user scope"
    return True, f"server: {scope} scope, hooks: {hooks_scope} scope"

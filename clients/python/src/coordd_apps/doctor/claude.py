"""The Claude Code checks: `claude mcp list` (it health-checks the servers, no model
needed) and the hooks `coord setup claude` registers, in the settings files that
apply to a worktree; `claude_coverage` asks the same of each worktree.

The settings files are read rather than asked of Claude Code because it has no
command that lists hooks; the MCP server is asked of `claude mcp list` because
only Claude Code knows whether it actually connects.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from coordd_apps.doctor.findings import Finding, HostFailed, run_host
from coordd_apps.setup.hosts import SERVER_KEY

#: `claude mcp list` starts and health-checks every server; 2.1.332 takes about 20 s
#: on the 2-core test machine even with none configured.
CLAUDE_TIMEOUT_S = 60.0

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


def check_claude(binary: str, cwd: Path, top: Path, home: Path) -> list[Finding]:
    findings = []
    fix = "coord setup claude"
    try:
        done = run_host([binary, "mcp", "list"], cwd, CLAUDE_TIMEOUT_S)
        status = claude_server_status(done.stdout)
        if status is None:
            findings.append(
                Finding(
                    "claude", "mcp server", False, "coord is not listed by `claude mcp list`", fix
                )
            )
        else:
            state = status.lstrip("✔✗⚠! ").strip()
            ok = "connected" in state.lower()
            if ok:
                fix_now = None
            elif "approv" in state.lower():
                fix_now = "start Claude Code here and approve the coord server (or /mcp)"
            else:
                fix_now = "run `claude mcp get coord` and `coord mcp` by hand to see why"
            findings.append(
                Finding(
                    "claude",
                    "mcp server",
                    ok,
                    f"coord: {state} (claude mcp list)",
                    fix_now,
                    data={"state": state},
                )
            )
    except HostFailed as exc:
        findings.append(Finding("claude", "mcp server", False, str(exc), "claude mcp list"))
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

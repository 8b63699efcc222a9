"""The Codex checks: `codex mcp list --json`, then `codex app-server` over stdio
JSON-RPC: `mcpServerStatus/list` (Codex starts the server as a session would) and
`hooks/list`, which gives each hook's source and trust status; `codex_coverage`
asks the same of each worktree from the one conversation's answers.

app-server is asked because Codex alone knows whether it trusts a hook: an
untrusted hook is configured but never runs.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coordd_apps.doctor.findings import Finding, HostFailed, run_host
from coordd_apps.setup.hosts import SERVER_KEY
from coordd_apps.wording.advice import plural

#: `codex mcp list` only reads the configuration (0.2 s).
CODEX_LIST_TIMEOUT_S = 30.0
#: The whole `codex app-server` conversation, the coord server's start included
#: (`startup_timeout_sec` is 20 s).
APP_SERVER_TIMEOUT_S = 60.0

#: The same for Codex, by the event names `hooks/list` answers.
CODEX_HOOKS = {
    "sessionStart": "session-start",
    "preToolUse": "pre-edit",
    "postToolUse": "post-tool",  # edits recorded (issue 33), then messages
    "userPromptSubmit": "deliver",  # unread messages into the turn (issue 34)
    "stop": "turn-end",  # the turn's usage to the ledger as it ends
    "sessionEnd": "session-end",
}
TRUST_FIX = "open Codex and review coord's hooks in /hooks"
#: What `codex` prints when it cannot read its own configuration (0.171.0).
CONFIG_ERROR_MARK = "failed to load"


def config_fix(said: str) -> str | None:
    """The fix when Codex could not load its configuration, else None.

    Why: `coord setup codex` refuses a file it cannot parse (it writes nothing), so
    naming it as the fix would send the user round in a circle; the file Codex
    names must be corrected by hand first.
    """
    if CONFIG_ERROR_MARK not in said:
        return None
    return (
        "correct the Codex configuration file it names (coord setup will not edit a file"
        " it cannot parse), then run coord doctor again"
    )


class AppServer:
    """`codex app-server` on stdio, one JSON-RPC request at a time, under one deadline."""

    def __init__(self, binary: str, cwd: Path, timeout_s: float = APP_SERVER_TIMEOUT_S) -> None:
        self.deadline = time.monotonic() + timeout_s
        self.timeout_s = timeout_s
        self.process = subprocess.Popen(
            [binary, "app-server"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.selector = selectors.DefaultSelector()
        assert self.process.stdout is not None
        self.selector.register(self.process.stdout, selectors.EVENT_READ)
        self.buffer = b""
        self.next_id = 0

    def __enter__(self) -> AppServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.selector.close()
        try:
            if self.process.stdin is not None:
                self.process.stdin.close()
        except OSError:
            pass
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
            self.process.stdin.flush()
        except OSError as exc:
            raise HostFailed(f"codex app-server exited: {exc}") from exc

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self._send({"method": method, **({"params": params} if params is not None else {})})

    def request(self, method: str, params: dict[str, Any]) -> Any:
        """The result of `method`; an error answer, an exit or the deadline is `HostFailed`."""
        self.next_id += 1
        ident = self.next_id
        self._send({"id": ident, "method": method, "params": params})
        while True:
            message = self._message()
            if message.get("id") != ident or "method" in message:
                continue  # a notification, or a request of the server's own
            if "error" in message:
                raise HostFailed(f"codex app-server: {method}: {message['error'].get('message')}")
            return message.get("result")

    def _message(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while b"\n" not in self.buffer:
            left = self.deadline - time.monotonic()
            if left <= 0 or not self.selector.select(left):
                raise HostFailed(f"codex app-server did not answer within {self.timeout_s:.0f} s")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise HostFailed("codex app-server exited before answering")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            message = json.loads(line)
        except ValueError:
            return {}
        return message if isinstance(message, dict) else {}


@dataclass
class CodexAnswers:
    """What `codex app-server` said: coord's server status and the hooks per cwd."""

    server_tools: int | None = None
    server_error: str | None = None
    hooks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None


def ask_app_server(binary: str, cwd: Path, cwds: list[Path], version: str) -> CodexAnswers:
    answers_ = CodexAnswers()
    try:
        with AppServer(binary, cwd) as server:
            client_info = {"name": "coord-doctor", "title": "coord doctor", "version": version}
            server.request("initialize", {"clientInfo": client_info})
            server.notify("initialized")
            try:
                status = server.request(
                    "mcpServerStatus/list", {"serverName": SERVER_KEY, "detail": "toolsAndAuthOnly"}
                )
                entry = next(
                    (s for s in (status or {}).get("data", []) if s.get("name") == SERVER_KEY),
                    None,
                )
                if entry is None:
                    answers_.server_error = "Codex started no server named coord"
                else:
                    answers_.server_tools = len(entry.get("tools") or {})
            except HostFailed as exc:
                answers_.server_error = str(exc)
            listed = server.request("hooks/list", {"cwds": [str(c) for c in cwds]})
            for entry in (listed or {}).get("data", []):
                hooks = [
                    h
                    for h in entry.get("hooks", [])
                    if "coord" in str(h.get("command")) and " hook " in str(h.get("command"))
                ]
                answers_.hooks[str(entry.get("cwd"))] = hooks
                for warning in entry.get("warnings", []) + entry.get("errors", []):
                    text = str(warning if isinstance(warning, str) else json.dumps(warning))
                    if text not in answers_.warnings:
                        answers_.warnings.append(text)
    except HostFailed as exc:
        answers_.error = str(exc)
    except OSError as exc:
        answers_.error = f"codex app-server could not run: {exc}"
    return answers_


def codex_hook_event(hook: Mapping[str, Any]) -> str | None:
    command = str(hook.get("command"))
    return next((e for e, sub in CODEX_HOOKS.items() if f"hook {sub}" in command), None)


def check_codex(
    binary: str, cwd: Path, worktrees: list[Path], version: str
) -> tuple[list[Finding], CodexAnswers, bool]:
    """The Codex findings, what app-server said, and whether the server is configured."""
    findings = []
    fix = "coord setup codex"
    configured = False
    try:
        done = run_host([binary, "mcp", "list", "--json"], cwd, CODEX_LIST_TIMEOUT_S)
        try:
            servers = json.loads(done.stdout)
        except ValueError:
            servers = None
        if not isinstance(servers, list):
            said = done.stderr.strip() or done.stdout.strip()
            fix = config_fix(said) or fix  # the hooks' finding below is the same mistake
            findings.append(
                Finding(
                    "codex", "mcp server", False, f"`codex mcp list --json` said: {said[:300]}", fix
                )
            )
        else:
            entry = next((s for s in servers if s.get("name") == SERVER_KEY), None)
            if entry is None:
                findings.append(
                    Finding(
                        "codex", "mcp server", False, "coord is not listed by `codex mcp list`", fix
                    )
                )
            elif not entry.get("enabled", True):
                reason = entry.get("disabled_reason") or "disabled"
                findings.append(
                    Finding(
                        "codex",
                        "mcp server",
                        False,
                        f"coord is listed but not enabled ({reason})",
                        "set enabled = true in [mcp_servers.coord] of ~/.codex/config.toml",
                    )
                )
            else:
                configured = True
    except HostFailed as exc:
        findings.append(Finding("codex", "mcp server", False, str(exc), "codex mcp list"))
    cwds = [cwd, *[w for w in worktrees if w != cwd]]
    answers_ = ask_app_server(binary, cwd, cwds, version)
    if configured:
        if answers_.server_tools:
            detail = f"coord: listed, and starts with {answers_.server_tools} tools (app-server)"
            findings.append(Finding("codex", "mcp server", True, detail))
        else:
            why = answers_.server_error or answers_.error or "it answered no tools"
            findings.append(
                Finding(
                    "codex",
                    "mcp server",
                    False,
                    f"coord is listed but did not start: {why}",
                    "run `coord mcp` by hand to see why",
                )
            )
    if answers_.error is not None:
        findings.append(Finding("codex", "hooks", False, answers_.error, "codex app-server"))
        return findings, answers_, configured
    hooks = answers_.hooks.get(str(cwd), [])
    present = {codex_hook_event(h) for h in hooks}
    missing = [event for event in CODEX_HOOKS if event not in present]
    listed = [
        {
            "event": h.get("eventName"),
            "source": h.get("sourcePath"),
            "trust": h.get("trustStatus"),
            "key": h.get("key"),
            "hash": h.get("currentHash"),
            "enabled": h.get("enabled"),
        }
        for h in hooks
    ]
    if missing:
        findings.append(
            Finding(
                "codex",
                "hooks",
                False,
                f"missing coord hooks: {', '.join(missing)} (hooks/list in {cwd})",
                fix,
                data={"hooks": listed},
            )
        )
    for hook in listed:
        trusted = hook["trust"] in ("trusted", "managed")
        enabled = hook["enabled"] is not False
        state = str(hook["trust"]) + ("" if enabled else ", disabled")
        findings.append(
            Finding(
                "codex",
                f"hook {hook['event']}",
                trusted and enabled,
                f"{hook['event']} ({hook['source']}): {state}",
                None if trusted and enabled else TRUST_FIX,
                data={"hook": hook},
            )
        )
    for warning in answers_.warnings:
        findings.append(Finding("codex", "warning", True, f"Codex warns: {warning}", note=True))
    return findings, answers_, configured


def codex_coverage(
    home: Path, top: Path, answers_: CodexAnswers, configured: bool
) -> tuple[bool, str]:
    hooks = answers_.hooks.get(str(top))
    if hooks is None:
        return False, "hooks not listed (app-server: " + (answers_.error or "no answer") + ")"
    present = {codex_hook_event(h) for h in hooks}
    missing = [e for e in CODEX_HOOKS if e not in present]
    parts = []
    if not configured:
        parts.append("no coord MCP server")
    if missing:
        parts.append(f"no hooks {', '.join(missing)}")
    untrusted = [h for h in hooks if h.get("trustStatus") not in ("trusted", "managed")]
    if parts:
        return False, "; ".join(parts)
    user = all(str(h.get("sourcePath", "")).startswith(str(home)) for h in hooks)
    scope = "user scope" if user else "this worktree's .codex/hooks.json"
    if untrusted:
        return False, f"{scope}, {plural(len(untrusted), 'hook')} not trusted"
    return True, scope

"""`coord doctor`'s checks: ask the daemon and each host what they actually loaded.

Each check returns `Finding`s: what was looked at, whether it is in order, and
when it is not, the command that fixes it. Nothing here writes anything or
starts a daemon, and every host call has a timeout: a host that hangs is a
finding ("did not answer within N s"), never a hung doctor.

- the daemon: the socket every surface of this shell would use answers, and
  a host that gives its children a reduced environment (no
  `$XDG_RUNTIME_DIR` and no `$COORDD_SOCKET`: Codex's MCP servers) reaches
  the same daemon (`discovery`);
- Claude Code: `claude mcp list` (it health-checks the servers, no model
  needed) and the hooks `coord setup claude` registers, in the settings
  files that apply to this worktree;
- Codex: `codex mcp list --json`, then `codex app-server` over stdio
  JSON-RPC: `mcpServerStatus/list` (Codex starts the server as a session
  would) and `hooks/list`, which gives each hook's source and trust status;
- every worktree of the repository: is each host's setup one that covers it.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import subprocess
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from coordd_client.client import Client
from coordd_client.discovery import SocketRoute, answers
from coordd_client.protocol.errors import CoordError
from coordd_client.protocol.paths import SOCKET_ENV
from coordd_client.setup.hosts import SERVER_KEY

#: `claude mcp list` starts and health-checks every server; 2.1.332 takes about 20 s
#: on the 2-core test machine even with none configured.
CLAUDE_TIMEOUT_S = 60.0
#: `codex mcp list` only reads the configuration (0.2 s).
CODEX_LIST_TIMEOUT_S = 30.0
#: The whole `codex app-server` conversation, the coord server's start included
#: (`startup_timeout_sec` is 20 s).
APP_SERVER_TIMEOUT_S = 60.0
#: `--version` of a host.
VERSION_TIMEOUT_S = 15.0

#: The hooks `coord setup claude` registers: settings event -> `coord hook` sub-command.
CLAUDE_HOOKS = {
    "SessionStart": "session-start",
    "PreToolUse": "pre-edit",
    "Stop": "wake",
    "SessionEnd": "session-end",
}
#: The same for Codex, by the event names `hooks/list` answers.
CODEX_HOOKS = {
    "sessionStart": "session-start",
    "preToolUse": "pre-edit",
    "sessionEnd": "session-end",
}
#: What the reduced environment of a host's children lacks (Codex's MCP servers get a
#: fixed short list of variables: HOME, PATH, USER, TMPDIR, ...).
REDUCED_DROPS = ("XDG_RUNTIME_DIR", SOCKET_ENV)
TRUST_FIX = "open Codex and review them in /hooks"


@dataclass
class Finding:
    """One thing looked at. `ok` False is a problem (exit 1); `fix` says what to run."""

    section: str
    what: str
    ok: bool
    detail: str
    fix: str | None = None
    skipped: bool = False
    #: Worth saying, not a problem (a host's warning about coord's files).
    note: bool = False
    data: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        status = (
            "skipped" if self.skipped else "note" if self.note else "ok" if self.ok else "missing"
        )
        return {
            "section": self.section,
            "check": self.what,
            "status": status,
            "detail": self.detail,
            "fix": self.fix,
            **self.data,
        }


class HostFailed(Exception):
    """A host command did not answer in time, or answered nothing usable."""


def run_host(argv: list[str], cwd: Path, timeout_s: float) -> subprocess.CompletedProcess[str]:
    """Run a host's command with stdin closed; a timeout kills it (and is `HostFailed`)."""
    try:
        return subprocess.run(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise HostFailed(
            f"`{' '.join(argv[-3:])}` did not answer within {timeout_s:.0f} s"
        ) from exc
    except OSError as exc:
        raise HostFailed(f"`{argv[0]}` could not run: {exc}") from exc


def host_version(binary: str, cwd: Path) -> str | None:
    try:
        done = run_host([binary, "--version"], cwd, VERSION_TIMEOUT_S)
    except HostFailed:
        return None
    words = done.stdout.split()
    return next((w for w in words if w[:1].isdigit()), None)


# -- the daemon -----------------------------------------------------------------------


def _server_info(socket: Path) -> dict[str, Any] | None:
    if not answers(socket):
        return None
    try:
        with Client(socket, timeout_s=10) as client:
            info: dict[str, Any] = msgspec.json.decode(client.call_raw("server.info").result)
    except (CoordError, OSError):
        return None
    return info


def reduced_environment(environ: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in environ.items() if k not in REDUCED_DROPS}


def reduced_socket(environ: Mapping[str, str]) -> tuple[Path, Path | None, str]:
    """Where a client with the reduced environment would go: (the path it derives,
    the socket it would use or None, how it got there)."""
    reduced = reduced_environment(environ)
    route = SocketRoute.resolve(None, reduced)
    if answers(route.path):
        return route.path, route.path, "derived"
    found = route.fallback(reduced)
    if found is None:
        return route.path, None, "none"
    return route.path, found.socket, found.source


def check_daemon(route: SocketRoute, socket: Path, autostart: bool) -> list[Finding]:
    findings = []
    info = _server_info(socket)
    if info is None:
        start = "the first coord command or MCP tool call starts one" if autostart else None
        findings.append(
            Finding(
                "daemon",
                "daemon",
                ok=autostart,
                detail=f"no daemon answers on {socket}" + (f" ({start})" if start else ""),
                fix=None if autostart else "coordd serve (or unset COORD_NO_AUTOSTART)",
                data={"socket": str(socket), "pid": None},
            )
        )
    else:
        via = "" if socket == route.path else f" (found beside {route.path}, which has none)"
        findings.append(
            Finding(
                "daemon",
                "daemon",
                ok=True,
                detail=f"coordd {info.get('version', '?')}, pid {info['pid']},"
                f" socket {socket}{via}",
                data={"socket": str(socket), "pid": info["pid"], "version": info.get("version")},
            )
        )
    derived, reached, how = reduced_socket(os.environ)
    reached_info = _server_info(reached) if reached is not None else None
    label = "reduced environment (no XDG_RUNTIME_DIR, no COORDD_SOCKET, like Codex's MCP servers)"
    data: dict[str, Any] = {
        "derived_socket": str(derived),
        "socket": str(reached) if reached else None,
        "found_by": how,
        "pid": reached_info["pid"] if reached_info else None,
    }
    if info is None:
        findings.append(
            Finding(
                "daemon", "reduced environment", True, f"{label}: nothing to compare", data=data
            )
        )
    elif reached_info is None:
        findings.append(
            Finding(
                "daemon",
                "reduced environment",
                ok=False,
                detail=f"{label}: derives {derived}, where no daemon answers, and finds none"
                " elsewhere: it would start a second daemon on a second board",
                fix=f"run the daemon on its default socket, or pin it: --socket {socket}"
                " in the host's server command",
                data=data,
            )
        )
    elif reached_info["pid"] != info["pid"]:
        findings.append(
            Finding(
                "daemon",
                "reduced environment",
                ok=False,
                detail=f"{label}: reaches another daemon (pid {reached_info['pid']} on {reached})",
                fix=f"stop the second daemon, or pin the socket: --socket {socket}",
                data=data,
            )
        )
    else:
        source = {"record": "the database's lock-file record", "runtime dir": "/run/user/<uid>"}
        where = (
            f"on {derived}"
            if how == "derived"
            else f"{derived} has none; found through {source.get(how, how)}"
        )
        findings.append(
            Finding(
                "daemon",
                "reduced environment",
                ok=True,
                detail=f"{label}: same daemon ({where})",
                data=data,
            )
        )
    return findings


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


# -- Codex ----------------------------------------------------------------------------


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
            findings.append(
                Finding(
                    "codex",
                    "mcp server",
                    False,
                    "`codex mcp list --json` said: "
                    + (done.stderr.strip() or done.stdout.strip())[:300],
                    fix,
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


# -- worktrees ------------------------------------------------------------------------


def git_worktrees(cwd: Path) -> list[Path] | None:
    """The worktrees of the repository holding `cwd` (None: not in a repository)."""
    try:
        done = run_host(["git", "worktree", "list", "--porcelain"], cwd, 15)
    except HostFailed:
        return None
    if done.returncode != 0:
        return None
    return [Path(line[9:]) for line in done.stdout.splitlines() if line.startswith("worktree ")]


def worktree_top(cwd: Path) -> Path:
    try:
        done = run_host(["git", "rev-parse", "--show-toplevel"], cwd, 15)
    except HostFailed:
        return cwd
    return Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else cwd


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
        return False, f"{scope}, {len(untrusted)} hook(s) not trusted"
    return True, scope


def git_guard_coverage(tree: Path) -> tuple[bool, str]:
    """Whether the pre-commit hook git runs in worktree `tree` is coord's guard (or calls
    it): git resolves the hooks directory per worktree, so each one is asked."""
    try:
        done = run_host(
            ["git", "rev-parse", "--path-format=absolute", "--git-path", "hooks"], tree, 15
        )
    except HostFailed:
        return False, "git did not answer"
    hook = Path(done.stdout.strip()) / "pre-commit"
    try:
        text = hook.read_text(errors="replace")
    except OSError:
        return False, f"no pre-commit hook in {hook.parent}"
    if "hook pre-commit" in text and "coord" in text:
        return True, f"in {hook}"
    return False, f"{hook} does not run `coord hook pre-commit`"


def check_worktrees(
    cwd: Path,
    home: Path,
    worktrees: list[Path] | None,
    claude: bool,
    codex: tuple[CodexAnswers, bool] | None,
) -> list[Finding]:
    if worktrees is None:
        return [
            Finding(
                "worktrees", "worktrees", True, f"{cwd} is not in a git repository", skipped=True
            )
        ]
    findings = []
    for tree in worktrees:
        if not tree.is_dir():
            findings.append(
                Finding(
                    "worktrees",
                    str(tree),
                    True,
                    f"{tree}: missing on disk (git worktree prune)",
                    skipped=True,
                )
            )
            continue
        parts: list[str] = []
        fixes: list[str] = []
        ok = True
        data: dict[str, Any] = {"worktree": str(tree)}
        if claude:
            covered, how = claude_coverage(home, tree)
            parts.append(f"claude {'covered' if covered else 'NOT covered'} ({how})")
            ok &= covered
            data["claude"] = {"covered": covered, "how": how}
            if not covered:
                fixes.append("coord setup claude")
        if codex is not None:
            covered, how = codex_coverage(home, tree, *codex)
            parts.append(f"codex {'covered' if covered else 'NOT covered'} ({how})")
            ok &= covered
            data["codex"] = {"covered": covered, "how": how}
            if not covered:
                fixes.append(TRUST_FIX if "trusted" in how else "coord setup codex")
        guarded, where = git_guard_coverage(tree)
        parts.append(f"git guard {'on' if guarded else 'NOT on'} ({where})")
        data["git_guard"] = {"on": guarded, "how": where}
        if not guarded:
            ok = False
            fixes.append("coord setup git")
        findings.append(
            Finding(
                "worktrees",
                str(tree),
                ok,
                f"{tree}: {'; '.join(parts)}",
                "; ".join(fixes) or None,
                data=data,
            )
        )
    return findings


# -- all of it ------------------------------------------------------------------------


def run_checks(
    route: SocketRoute, socket: Path, autostart: bool, cwd: Path, client_version: str
) -> list[Finding]:
    home = Path.home()
    findings = check_daemon(route, socket, autostart)
    top = worktree_top(cwd)
    worktrees = git_worktrees(cwd)
    claude = shutil.which("claude")
    if claude is None:
        findings.append(
            Finding("claude", "claude", True, "claude: not installed, skipped", skipped=True)
        )
    else:
        version = host_version(claude, cwd)
        findings.append(
            Finding(
                "claude",
                "claude",
                True,
                f"Claude Code {version or '?'} ({claude})",
                data={"path": claude, "version": version},
            )
        )
        findings += check_claude(claude, cwd, top, home)
    codex = shutil.which("codex")
    codex_state: tuple[CodexAnswers, bool] | None = None
    if codex is None:
        findings.append(
            Finding("codex", "codex", True, "codex: not installed, skipped", skipped=True)
        )
    else:
        version = host_version(codex, cwd)
        findings.append(
            Finding(
                "codex",
                "codex",
                True,
                f"Codex {version or '?'} ({codex})",
                data={"path": codex, "version": version},
            )
        )
        found, answers_, configured = check_codex(codex, top, worktrees or [], client_version)
        findings += found
        codex_state = (answers_, configured)
    findings += check_worktrees(top, home, worktrees, claude is not None, codex_state)
    return findings

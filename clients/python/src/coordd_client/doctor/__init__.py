"""`coord doctor`'s checks: ask the daemon and each host what they actually loaded.

Each check returns `Finding`s (`findings`): what was looked at, whether it is in
order, and when it is not, the command that fixes it. Nothing here writes
anything or starts a daemon, and every host call has a timeout: a host that hangs
is a finding ("did not answer within N s"), never a hung doctor.

- the daemon (`daemon`): the socket every surface of this shell would use
  answers, and a host that gives its children a reduced environment (no
  `$XDG_RUNTIME_DIR` and no `$COORDD_SOCKET`: Codex's MCP servers) reaches
  the same daemon (`discovery`);
- Claude Code (`claude`): `claude mcp list` (it health-checks the servers, no
  model needed) and the hooks `coord setup claude` registers, in the settings
  files that apply to this worktree;
- Codex (`codex`): `codex mcp list --json`, then `codex app-server` over stdio
  JSON-RPC: `mcpServerStatus/list` (Codex starts the server as a session
  would) and `hooks/list`, which gives each hook's source and trust status;
- every worktree of the repository (`worktrees`): is each host's setup one
  that covers it.

This module only runs them in order; the names below are re-exported so that
`coordd_client.doctor.X` keeps meaning what it meant when this was one module.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from coordd_client.discovery import SocketRoute
from coordd_client.doctor.claude import (
    CLAUDE_HOOKS,
    CLAUDE_TIMEOUT_S,
    check_claude,
    claude_coverage,
    claude_hooks_found,
    claude_server_scope,
    claude_server_status,
    claude_settings_files,
)
from coordd_client.doctor.codex import (
    APP_SERVER_TIMEOUT_S,
    CODEX_HOOKS,
    CODEX_LIST_TIMEOUT_S,
    TRUST_FIX,
    AppServer,
    CodexAnswers,
    ask_app_server,
    check_codex,
    codex_coverage,
    codex_hook_event,
)
from coordd_client.doctor.daemon import (
    REDUCED_DROPS,
    check_daemon,
    reduced_environment,
    reduced_socket,
)
from coordd_client.doctor.findings import (
    VERSION_TIMEOUT_S,
    Finding,
    HostFailed,
    host_version,
    run_host,
)
from coordd_client.doctor.worktrees import (
    check_worktrees,
    git_guard_coverage,
    git_worktrees,
    worktree_top,
)

__all__ = [
    "APP_SERVER_TIMEOUT_S",
    "CLAUDE_HOOKS",
    "CLAUDE_TIMEOUT_S",
    "CODEX_HOOKS",
    "CODEX_LIST_TIMEOUT_S",
    "REDUCED_DROPS",
    "TRUST_FIX",
    "VERSION_TIMEOUT_S",
    "AppServer",
    "CodexAnswers",
    "Finding",
    "HostFailed",
    "ask_app_server",
    "check_claude",
    "check_codex",
    "check_daemon",
    "check_worktrees",
    "claude_coverage",
    "claude_hooks_found",
    "claude_server_scope",
    "claude_server_status",
    "claude_settings_files",
    "codex_coverage",
    "codex_hook_event",
    "git_guard_coverage",
    "git_worktrees",
    "host_version",
    "reduced_environment",
    "reduced_socket",
    "run_checks",
    "run_host",
    "worktree_top",
]


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

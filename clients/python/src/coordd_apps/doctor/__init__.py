"""`coord doctor`'s checks: ask the daemon and each host what they actually loaded.

Each check returns `Finding`s (`findings`): what was looked at, whether it is in
order, and when it is not, the command that fixes it. Nothing here writes
anything or starts a daemon, and every host call has a timeout: a host that hangs
is a finding ("did not answer within N s"), never a hung doctor.

- the daemon (`daemon`): the socket every surface of this shell would use
  answers (its pid and board), and a client with only what Codex passes its MCP
  servers reaches the same daemon (`discovery`, worked out here);
- the boards (`boards`, issue 43): every live daemon of this user (the
  rendezvous), and each host's MCP server started as that host starts it
  (`hostenv`: its command, its exact environment) and asked which board it
  reaches; more than one live board is one finding naming which surface
  reaches which and the one command that ends the split;
- Claude Code (`claude`): `claude mcp list` (it health-checks the servers, no
  model needed) and the hooks `coord setup claude` registers, in the settings
  files that apply to this worktree;
- Codex (`codex`): `codex mcp list --json`, then `codex app-server` over stdio
  JSON-RPC: `mcpServerStatus/list` (Codex starts the server as a session
  would) and `hooks/list`, which gives each hook's source and trust status;
- every worktree of the repository (`worktrees`): is each host's setup one
  that covers it;
- the repository's edit-protection switch (`edits`): `.coord/config.json` as the
  hooks read it, and why they pass over one they cannot use;
- the repository's landings (`landings`): a `coord land` that died half-way
  through moving a target and its checkout, which its journal tells.

This module runs them, the hosts' at once (`run_checks`); the names below are re-exported so that
`coordd_apps.doctor.X` keeps meaning what it meant when this was one module.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from coordd_apps.doctor.boards import check_boards
from coordd_apps.doctor.claude import (
    CLAUDE_HOOKS,
    CLAUDE_TIMEOUT_S,
    CLAUDE_WAIT_S,
    check_claude,
    claude_coverage,
    claude_hooks_found,
    claude_server_scope,
    claude_server_status,
    claude_settings_files,
)
from coordd_apps.doctor.codex import (
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
from coordd_apps.doctor.daemon import (
    REDUCED_DROPS,
    check_daemon,
    reduced_environment,
    reduced_socket,
)
from coordd_apps.doctor.edits import check_edit_config
from coordd_apps.doctor.findings import (
    VERSION_TIMEOUT_S,
    Finding,
    HostCall,
    HostFailed,
    HostSlow,
    host_version,
    run_host,
)
from coordd_apps.doctor.hostenv import host_surfaces
from coordd_apps.doctor.landings import check_landings
from coordd_apps.doctor.worktrees import (
    check_worktrees,
    git_guard_coverage,
    git_worktrees,
    worktree_top,
)
from coordd_apps.setup.hosts import coord_command
from coordd_client.discovery import SocketRoute

__all__ = [
    "APP_SERVER_TIMEOUT_S",
    "CLAUDE_HOOKS",
    "CLAUDE_TIMEOUT_S",
    "CLAUDE_WAIT_S",
    "CODEX_HOOKS",
    "CODEX_LIST_TIMEOUT_S",
    "REDUCED_DROPS",
    "TRUST_FIX",
    "VERSION_TIMEOUT_S",
    "AppServer",
    "CodexAnswers",
    "Finding",
    "HostCall",
    "HostFailed",
    "HostSlow",
    "ask_app_server",
    "check_boards",
    "check_claude",
    "check_codex",
    "check_daemon",
    "check_edit_config",
    "check_landings",
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
    "host_surfaces",
    "host_version",
    "reduced_environment",
    "reduced_socket",
    "run_checks",
    "run_host",
    "worktree_top",
]


def run_checks(
    route: SocketRoute,
    socket: Path,
    autostart: bool,
    cwd: Path,
    client_version: str,
    *,
    wait: bool = False,
) -> list[Finding]:
    """Every check, the hosts' at once: `claude mcp list` and Codex's conversation run
    while the daemon and boards are asked, so the doctor takes about as long as its
    slowest part, not their sum. `wait` lets `claude mcp list` run to its end
    (`CLAUDE_TIMEOUT_S`) rather than `CLAUDE_WAIT_S` (see `check_claude`)."""
    home = Path.home()
    top = worktree_top(cwd)
    worktrees = git_worktrees(cwd)
    claude_path, codex_path = shutil.which("claude"), shutil.which("codex")
    listing = HostCall([claude_path, "mcp", "list"], cwd) if claude_path else None
    with ThreadPoolExecutor(max_workers=3) as pool:
        claude_version = pool.submit(host_version, claude_path, cwd) if claude_path else None
        codex_version = pool.submit(host_version, codex_path, cwd) if codex_path else None
        codex_checked = (
            pool.submit(check_codex, codex_path, top, worktrees or [], client_version)
            if codex_path
            else None
        )
        findings = check_daemon(route, socket, autostart)
        shell_board = findings[0].data.get("board_id")
        surfaces = host_surfaces(os.environ, home, top, coord_command())
        findings += check_boards(shell_board, socket, surfaces)
        findings.append(_host("claude", "Claude Code", claude_path, claude_version))
        if listing is not None:
            started = next(
                (
                    f
                    for f in findings
                    if f.section == "boards" and f.data.get("surface") == "claude"
                ),
                None,
            )
            # Without a start of Claude Code's server to judge by (no MCP SDK here, or it
            # failed), only `claude mcp list`'s own verdict says more: it gets its time.
            full = wait or started is None or bool(started.data.get("failed"))
            budget = CLAUDE_TIMEOUT_S if full else CLAUDE_WAIT_S
            listed = _listed(listing, listing.started + budget - time.monotonic())
            cut_short = isinstance(listed, HostSlow) and not full
            findings += check_claude(listed, top, home, started, cut_short)
        findings.append(_host("codex", "Codex", codex_path, codex_version))
        codex_state: tuple[CodexAnswers, bool] | None = None
        if codex_checked is not None:
            found, answers_, configured = codex_checked.result()
            findings += found
            codex_state = (answers_, configured)
    findings += check_worktrees(top, home, worktrees, claude_path is not None, codex_state)
    if worktrees:  # the first is the main worktree: the project's directory
        findings += check_edit_config(worktrees[0])
    findings += check_landings(cwd)
    return findings


def _listed(call: HostCall, left_s: float) -> subprocess.CompletedProcess[str] | HostFailed:
    try:
        return call.result(left_s)
    except HostFailed as exc:
        return exc


def _host(
    program: str, title: str, path: str | None, version: Future[str | None] | None
) -> Finding:
    """The host's program on PATH with its version, or its absence (skipped, said)."""
    if path is None or version is None:
        return Finding(program, program, True, f"{program}: not installed, skipped", skipped=True)
    said = version.result()
    return Finding(
        program,
        program,
        True,
        f"{title} {said or '?'} ({path})",
        data={"path": path, "version": said},
    )

"""What `coord setup HOST` writes, where, for each host (HOSTS.md sections 2 and 3).

User scope by default: the host's user-wide files, which apply in every
repository and every worktree of it, including worktrees created later
(Claude Code and Cursor read project files from the session's own worktree
only, with no fallback to the main one, and Codex lists no project hooks in
a linked worktree without a `.codex/` directory). Nothing is written into
the repository, so nothing machine-local can be committed. `--worktree`
writes the per-worktree files instead (run it in each worktree; do not
commit them: they hold this machine's path to `coord`).

The MCP server's key is `coord` everywhere. Commands are the absolute path
of this `coord`, so they work from a host's reduced environment.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from coordd_apps.setup.apply import Target
from coordd_apps.setup.formats import Piece, json_entry, json_hooks, markdown_block, toml_table
from coordd_client.identity import WORKSPACE_ENV

SERVER_KEY = "coord"
#: Codex gives an MCP server 10 s to start by default. Measured on the 2-core test
#: machine: 0.75 s from spawn to the tool list (the SDK's import is most of it), and the
#: daemon, when none runs, starts on the first tool call (0.25 s more). 20 s leaves a
#: wide margin for a loaded machine or a cold disk.
CODEX_STARTUP_TIMEOUT_S = 20
#: `wait_for_task` answers within 50 s; a tool call may take that plus the round trip.
CODEX_TOOL_TIMEOUT_S = 90
#: The wake hook exits 0 after `--max-wait` seconds; its host timeout is a little longer.
#: No hook can re-arm itself without waking the model, so the horizon is long: a tab
#: idle for a day is not woken (the session-start context and the README say so).
WAKE_MAX_WAIT_S = 86_100
WAKE_TIMEOUT_S = 86_400
#: What the user sees, and what the model is told, when the wake hook wakes a tab
#: (Claude Code's hook fields `rewakeSummary` and `rewakeMessage`, checked on
#: 2.1.332; without them it shows "Stop hook feedback" as if a hook had failed).
#: The summary is all the user sees of the wake itself, and it is fixed: 2.1.332
#: takes a summary from the hook's own output only for a plugin of an official
#: marketplace (issue 47 item 6), so the model, which is told what woke it, is asked
#: to say it to the user.
WAKE_SUMMARY = "coord: work or a message for this tab"
WAKE_MESSAGE = (
    "coordd (the shared task board) woke this tab. The user saw only"
    f' "{WAKE_SUMMARY}": begin your reply with one line telling them what woke it'
    " (which task or message, from whom). What woke it:"
)
#: Claude Code's tools after which `coord hook post-tool` runs: the edits and Read are
#: recorded (issue 33: the stale-write guard needs both), and after them and shells
#: unread messages are delivered (issue 34). Other tools get no process start.
POST_TOOL_CLAUDE = "Edit|Write|MultiEdit|NotebookEdit|Read|Bash"
#: Codex gives a SessionEnd hook 1 s unless told otherwise, and clamps it to 3 s (0.171.0):
#: session end hands back claims, reservations and assignments within 1 s.
CODEX_SESSION_END_TIMEOUT_S = 3
#: What Codex passes an MCP server of its own accord (0.171.0, measured with a server that
#: dumps its environment; `coord doctor` starts the server with the same): the rest of
#: Codex's environment is stripped unless the server's table lists it in `env_vars`.
CODEX_DEFAULT_ENV = ("HOME", "LANG", "LC_ALL", "LOGNAME", "PATH", "SHELL", "TERM", "TMPDIR",
                     "TZ", "USER", "__CF_USER_TEXT_ENCODING")  # fmt: skip
#: What `coord setup codex` lists in `env_vars`: every variable that decides which board a
#: surface reaches and as whom, so `coord mcp` in Codex sees what the hooks and the shell
#: of the same tab see (issue 43: without them it derived another socket and started a
#: second board). Codex passes one only when it is set in Codex's own environment, so the
#: live values go through: nothing is pinned that a new login would make stale (the socket
#: is not pinned, unlike Cursor's, for that reason; the rendezvous finds the daemon when
#: Codex itself was started without them). TMPDIR is passed already; it is listed so a
#: Codex that stops passing it keeps working.
CODEX_ENV_VARS = (
    "XDG_RUNTIME_DIR",  # the socket's directory (PROTOCOL section 1)
    "TMPDIR",  # the socket's directory without XDG_RUNTIME_DIR
    "XDG_STATE_HOME",  # the default board a daemon started from here serves
    "COORDD_SOCKET",
    "COORDD_DB",
    "COORDD_STORE",
    "COORD_NO_AUTOSTART",  # the user said no daemon is started for them: nor here
    "COORD_AGENT",  # the hooks see these: the server must name the same agent and board
    "COORD_PROJECT",
)

INSTRUCTIONS = """\
## Working alongside other agents (coordd)

Other agents work on this repository at the same time; the coordd board keeps you apart.
- Own a task before working on it: `claim_next` or `claim_task` (MCP tools), or
  `coord next` / `coord claim ID` in a shell. A lost claim means someone else has it.
- Your first edit of a file reserves it for you (until your task or session ends); reserve
  a whole area first with `reserve_paths` or `coord reserve 'src/auth/**'`. Edits of files
  another agent reserved are refused, and so is an edit of a file another agent changed
  since you read it (read it again). Ask a holder to hand files over: `request_release`
  or `coord request 'src/auth/**' --wait 300`.
- Shared things that are not files (a port, the test database, one migration at a time):
  `acquire_slot` / `lease_port`, or `coord slot acquire NAME` / `coord port NAME`.
  Merge a finished branch through the landing queue: `coord land`.
- Messages from other agents appear in your context; answer with `send_message`
  (`reply_to`) or `answer_request` for a release request.
- An idle tab is woken when work is assigned to it or a message comes (Claude Code, for up
  to a day).
- On long work, `heartbeat`; when done, `complete_task` with your fence and an ack
  (`then_post: {"title": ...}`), or `coord done ID --ack TITLE`: an ack is posted done,
  never as work.
- Found a bug or follow-up? Post it (`post_task`, kind bug) instead of doing it unasked.
"""

CURSOR_RULE_PREFIX = """\
---
description: Coordinate with the other agents on this repository through coordd
alwaysApply: true
---
"""

GIT_HOOK = """\
#!/bin/sh
# coord pre-commit guard (written by `coord setup git`; `coord setup git --remove` undoes it).
# Refuses staged files another agent reserved; the hook that was here runs after it.
{coord} hook pre-commit || exit $?
chained="$(dirname "$0")/pre-commit.coord-chained"
if [ -x "$chained" ]; then exec "$chained" "$@"; fi
exit 0
"""


class SetupError(Exception):
    """Setup cannot proceed; the message says why and what to do."""


def coord_command() -> str:
    """The absolute path of the `coord` beside this Python, else the one that runs now."""
    beside = Path(sys.executable).parent / "coord"
    if beside.exists():
        return str(beside)
    return str(Path(sys.argv[0]).resolve())


def project_root(cwd: Path | None = None) -> Path:
    out = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
    )
    if out.returncode != 0 or not out.stdout.strip():
        raise SetupError(
            "not in a git repository: run coord setup in the repository to set up,"
            " or pass --user for the user-wide files"
        )
    return Path(out.stdout.strip())


def instructions(user: bool, coord: str) -> str:
    """The block for the host's instruction file. User scope is this machine's own file,
    so it can say where `coord` is: a host's shell may not have it on PATH (Codex runs
    commands through `bash -lc`, which rebuilds PATH from the login profile)."""
    if not user:
        return INSTRUCTIONS  # may be committed: no machine-local path
    return INSTRUCTIONS + f"- In a shell, `coord` is `{coord}` if `coord` alone is not found.\n"


def _hook(coord: str, event: str, host: str, *extra: str) -> str:
    return " ".join([shlex.quote(coord), "hook", event, "--host", host, *extra])


def claude(user: bool, coord: str, home: Path, root: Path | None) -> list[Target]:
    def command(event: str, *extra: str) -> dict[str, object]:
        return {"type": "command", "command": _hook(coord, event, "claude", *extra)}

    start = {**command("session-start"), "timeout": 10}
    guard = {**command("pre-edit"), "timeout": 5}
    wake = {
        **command("wake", "--max-wait", str(WAKE_MAX_WAIT_S)),
        "asyncRewake": True,
        "timeout": WAKE_TIMEOUT_S,
        "rewakeSummary": WAKE_SUMMARY,
        "rewakeMessage": WAKE_MESSAGE,
    }
    end = {**command("session-end"), "timeout": 5}
    recorder = {**command("post-tool"), "timeout": 5}
    deliver = {**command("deliver"), "timeout": 5}  # issue 34: messages into the turn
    hooks: dict[str, list[dict[str, Any]]] = {
        # No matcher: every source (startup, resume, clear, compact, fork, and any to come).
        "SessionStart": [{"hooks": [start]}],
        "PreToolUse": [{"matcher": "Edit|Write|MultiEdit|NotebookEdit", "hooks": [guard]}],
        # Edits and reads recorded (issue 33), then unread messages delivered (issue 34).
        "PostToolUse": [{"matcher": POST_TOOL_CLAUDE, "hooks": [recorder]}],
        "UserPromptSubmit": [{"hooks": [deliver]}],
        "Stop": [{"hooks": [wake]}],
        "SessionEnd": [{"hooks": [end]}],
    }
    server = {"command": coord, "args": ["mcp"]}
    if user:
        base = home / ".claude"
        mcp_file, settings, notes = (
            home / ".claude.json",
            base / "settings.json",
            base / "CLAUDE.md",
        )
    else:
        assert root is not None
        mcp_file, settings = root / ".mcp.json", root / ".claude" / "settings.json"
        notes = root / "CLAUDE.md"
    return [
        Target(mcp_file, json_entry(str(mcp_file), ("mcpServers", SERVER_KEY), server)),
        Target(settings, json_hooks(str(settings), hooks, under=("hooks",))),
        Target(notes, markdown_block(instructions(user, coord))),
    ]


def codex(user: bool, coord: str, home: Path, root: Path | None) -> list[Target]:
    def command(event: str, timeout: int = 10) -> dict[str, object]:
        return {"type": "command", "command": _hook(coord, event, "codex"), "timeout": timeout}

    hooks: dict[str, list[dict[str, Any]]] = {
        "SessionStart": [{"hooks": [command("session-start")]}],
        "PreToolUse": [{"matcher": "^apply_patch$", "hooks": [command("pre-edit")]}],
        # Edits recorded (issue 33); messages reach a Codex turn after edits and shells,
        # and at its prompt (issue 34).
        "PostToolUse": [{"matcher": "^(apply_patch|Bash)$", "hooks": [command("post-tool", 5)]}],
        "UserPromptSubmit": [{"hooks": [command("deliver", 5)]}],
        "Stop": [{"hooks": [command("turn-end", 5)]}],  # usage as the turn ends
        "SessionEnd": [{"hooks": [command("session-end", CODEX_SESSION_END_TIMEOUT_S)]}],
    }
    server = {
        "command": coord,
        "args": ["mcp"],
        "startup_timeout_sec": CODEX_STARTUP_TIMEOUT_S,
        "tool_timeout_sec": CODEX_TOOL_TIMEOUT_S,
        "env_vars": list(CODEX_ENV_VARS),
    }
    # Codex reads a project's config.toml only in trusted projects: the server goes
    # in the user's file whatever the scope.
    config = home / ".codex" / "config.toml"
    if user:
        hooks_file, notes = home / ".codex" / "hooks.json", home / ".codex" / "AGENTS.md"
    else:
        assert root is not None
        hooks_file, notes = root / ".codex" / "hooks.json", root / "AGENTS.md"
    return [
        Target(
            config,
            toml_table(
                str(config),
                ("mcp_servers", SERVER_KEY),
                server,
                merged=("env_vars",),
                essential="command",
            ),
        ),
        Target(hooks_file, json_hooks(str(hooks_file), hooks, under=("hooks",))),
        Target(notes, markdown_block(instructions(user, coord))),
    ]


def cursor(user: bool, coord: str, home: Path, root: Path | None) -> list[Target]:
    # Cursor gives servers and hooks a curated environment that may drop the variables
    # the socket path comes from: every command pins it.
    # Cursor runs one MCP server for every chat of a window, and its hooks see each chat
    # apart: both name the window's agent from its folder (`identity.cursor_agent`), the
    # hooks from their payload's `workspace_roots`, the server from `${workspaceFolder}`,
    # which Cursor expands in mcp.json.
    from coordd_wire.paths import default_socket_path

    pin = ["--socket", str(default_socket_path())]
    prefix = [shlex.quote(coord), *[shlex.quote(p) for p in pin]]
    server = {
        "command": coord,
        "args": [*pin, "mcp", "--host", "cursor"],
        "env": {WORKSPACE_ENV: "${workspaceFolder}"},
    }
    start = " ".join([*prefix, "hook", "session-start", "--host", "cursor"])
    guard = " ".join([*prefix, "hook", "pre-edit", "--host", "cursor"])
    end = " ".join([*prefix, "hook", "session-end", "--host", "cursor"])
    recorder = " ".join([*prefix, "hook", "post-tool", "--host", "cursor"])
    deliver = " ".join([*prefix, "hook", "deliver", "--host", "cursor"])
    hooks: dict[str, list[dict[str, Any]]] = {
        "sessionStart": [{"command": start}],
        # Issue 34: unread messages become the chat's follow-up message.
        "stop": [{"command": deliver}],
        "preToolUse": [{"matcher": "Write|StrReplace|Edit|MultiEdit|TabWrite", "command": guard}],
        # Edits and reads recorded (issue 33); beforeReadFile is answered "allow".
        "afterFileEdit": [{"command": recorder}],
        "beforeReadFile": [{"command": recorder}],
        # Per chat; the hook gives the window's holdings back on `window_close` only.
        "sessionEnd": [{"command": end}],
    }
    base = home / ".cursor" if user else _root(root) / ".cursor"
    mcp_file, hooks_file = base / "mcp.json", base / "hooks.json"
    targets = [
        Target(mcp_file, json_entry(str(mcp_file), ("mcpServers", SERVER_KEY), server)),
        Target(
            hooks_file,
            json_hooks(str(hooks_file), hooks, under=("hooks",), extra={"version": 1}),
        ),
    ]
    if not user:  # rules are per project
        rule = base / "rules" / "coord.mdc"
        targets.append(
            Target(rule, markdown_block(INSTRUCTIONS, new_file_prefix=CURSOR_RULE_PREFIX))
        )
    return targets


def _root(root: Path | None) -> Path:
    assert root is not None
    return root


def git(user: bool, coord: str, home: Path, root: Path | None) -> list[Target]:
    if user:
        raise SetupError(
            "the git guard is per repository: run coord setup git in it, without --user"
        )
    configured = subprocess.run(
        ["git", "config", "--get", "core.hooksPath"],
        capture_output=True,
        text=True,
        check=False,
        cwd=root,
    ).stdout.strip()
    if configured and not os.path.isabs(os.path.expanduser(configured)):
        # git resolves a relative hooksPath (husky's `.husky`) in each worktree: each has
        # its own hooks, so one guard here would leave every linked worktree unguarded.
        raise SetupError(
            f"core.hooksPath is relative ({configured}): git looks for hooks in each"
            f" worktree's own {configured}, so one guard cannot cover them all. Add the line"
            f" `{shlex.quote(coord)} hook pre-commit || exit $?` to the pre-commit hook your"
            " hook manager runs there (e.g. .husky/pre-commit), or set an absolute"
            " core.hooksPath and run coord setup git again"
        )
    hooks_dir = Path(
        subprocess.run(
            ["git", "rev-parse", "--path-format=absolute", "--git-path", "hooks"],
            capture_output=True,
            text=True,
            check=True,
            cwd=root,
        ).stdout.strip()
    )
    hook, chained = hooks_dir / "pre-commit", hooks_dir / "pre-commit.coord-chained"
    script = GIT_HOOK.format(coord=shlex.quote(coord))
    existing = hook.read_text() if hook.exists() else None
    theirs = None if existing is None or "coord pre-commit guard" in existing else existing
    kept = chained.read_text() if chained.exists() else theirs

    def keep_theirs(text: str | None) -> str:
        return kept if kept is not None else (text or "")

    def drop_chained(text: str) -> str | None:
        return None

    def add_hook(text: str | None) -> str:
        return script

    def remove_hook(text: str) -> str | None:
        return kept  # the hook that was there (None: there was none)

    def ours(text: str) -> bool:
        return "coord pre-commit guard" in text

    targets = [Target(hook, Piece(add_hook, remove_hook, ours), executable=True)]
    if kept is not None:
        chained_piece = Piece(keep_theirs, drop_chained, lambda _: True)
        targets.insert(0, Target(chained, chained_piece, executable=True))
    return targets


HOSTS = {"claude": claude, "codex": codex, "cursor": cursor, "git": git}


#: Where each host keeps its user files, and its program's name on PATH.
HOST_HOMES = {
    "claude": ((".claude", ".claude.json"), "claude"),
    "codex": ((".codex",), "codex"),
    "cursor": ((".cursor",), "cursor"),
}


def detect(home: Path, in_repository: bool) -> list[str]:
    """Which hosts this user has: a configuration directory, or the program on PATH
    (installed but never started yet)."""
    found = [host for host in HOST_HOMES if absent_reason(host, home) is None]
    if in_repository:
        found.append("git")
    return found


def absent_reason(host: str, home: Path) -> str | None:
    """Why `host` counts as not installed here (what was looked for), or None if it is."""
    names, program = HOST_HOMES[host]
    if any((home / name).exists() for name in names) or shutil.which(program):
        return None
    looked = " or ".join(f"~/{name}" for name in names)
    return f"not installed here (no {looked}, no `{program}` on PATH)"

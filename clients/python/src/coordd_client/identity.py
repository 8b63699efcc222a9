"""Who is calling, and which board: one rule each, shared by every client surface.

The CLI, the Python clients' defaults, the MCP server and the host hooks all
call `resolve_agent` and `resolve_project`, so a name can never depend on
which of them asked.

The agent, first match wins (`identify`, the one entry point every surface calls):

1. an explicit name (`--agent`, `Client(agent=...)`);
2. `$COORD_AGENT`;
3. a Cursor window: `cursor-<workspace folder>-<4 hex of its path>`, from the
   hook payload's `workspace_roots` or the MCP server's `$COORD_WORKSPACE`
   (setup passes `${workspaceFolder}`), so each window is one agent and two
   windows on two worktrees are two;
4. the tab registry (`coordd_client.tabs`): the name recorded for the host
   process this process runs under, by that tab's first session-start hook.
   It is what makes a tab one agent across `/clear` and for surfaces the
   host tells less (Codex starts MCP servers without `CODEX_THREAD_ID`);
5. the hook payload's session id: `<host>-` + its first 12 hex digits (the
   last 12 of a time-ordered, version-7 UUID such as Codex's thread ids,
   whose first 12 are its start time in milliseconds);
6. `$CLAUDE_CODE_SESSION_ID` (Claude Code sets it in its Bash tool, its
   hooks and its stdio MCP servers): `claude-` + its first 12 hex digits;
   `$CODEX_THREAD_ID` (Codex sets it for the commands it runs): `codex-...`;
7. the surface's own last resort (`last_resort` for the CLI):
   - **a terminal is the human's**: a command whose session has a controlling
     terminal, and no host above named it, was typed by the person at this
     machine (or by a script they ran there), so it acts as `human-<user>`,
     the name `coord top` and `coord web` act as (`human.py`): one person, one
     agent, one inbox on every human surface (issue 47 item 1);
   - **otherwise the session**: every process of one session (each subshell,
     pipeline, `$(...)`, `make` recipe and `subprocess` child) shares its
     leader, so the name is built from it:
     `<user>-session-<leader pid>-<4 hex of its start time>` (the start time
     keeps a reused pid from inheriting a dead session's claims).
   An MCP server has no terminal: it is named from its client's name, its
   host process and itself (`mcp_bridge.naming`).

The limits of rule 7: an agent that is not a Claude Code, Codex or Cursor tab
but runs `coord` in a terminal (a harness in tmux, two such agents side by
side) would be the human, and two of them one agent; and a supervisor that
starts every command in a new session (`setsid` per command) gives each
command a new name. Either way, pin the name: `export COORD_AGENT=...`
(`coord whoami --export` prints it).

The project: an explicit one; `$COORD_PROJECT`; the top level of the
repository's *main* worktree (from `git rev-parse --git-common-dir`), so
every worktree of one repository shares one board; else the directory itself
(absolute, symlinks resolved): a directory outside any repository is its own
project, not one board shared by every such directory.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Mapping

import msgspec

from coordd_client import tabs
from coordd_client.human import human_agent
from coordd_client.repository import main_worktree

AGENT_ENV = "COORD_AGENT"
PROJECT_ENV = "COORD_PROJECT"
CLAUDE_SESSION_ENV = "CLAUDE_CODE_SESSION_ID"
CODEX_THREAD_ENV = "CODEX_THREAD_ID"
#: A Cursor window's folder, passed to its MCP server by setup (`${workspaceFolder}`).
WORKSPACE_ENV = "COORD_WORKSPACE"
#: Hex digits of a host's session or thread id kept in the agent name.
HOST_ID_DIGITS = 12


class Resolved(msgspec.Struct, frozen=True):
    """A name and where it came from (`coord whoami` shows both)."""

    value: str
    source: str


#: A time-ordered UUID (version 7, as Codex's thread ids are): its first 48 bits are
#: the start time in milliseconds, so two sessions started in one millisecond would
#: share their first 12 digits; its last 12 are random.
_UUID7 = re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?7[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")


def host_agent(prefix: str, session_id: str) -> str:
    """`claude-3cda0b494380` from a host's session id: hex digits only, the first 12
    (the last 12 of a version-7 UUID, whose first 12 are a timestamp)."""
    digits = re.sub(r"[^0-9a-fA-F]", "", session_id).lower()
    kept = digits[-HOST_ID_DIGITS:] if _UUID7.match(session_id.lower()) else digits
    return f"{prefix}-{kept[:HOST_ID_DIGITS] or 'unknown'}"


def identify(
    *,
    explicit: str | None = None,
    environ: Mapping[str, str] | None = None,
    host: str | None = None,
    session: str | None = None,
    workspace: str | None = None,
    use_tabs: bool = True,
    process: int | None = None,
) -> Resolved | None:
    """Rules 1-6 for any surface; None when only the surface's last resort is left.

    `host` and `session` are what a hook's payload says (None elsewhere);
    `workspace` is a Cursor window's folder. `use_tabs=False` skips the tab
    registry (for callers that must not read the state directory). `process` is
    the process whose tab is asked about (default: this one; the shared MCP server
    asks for each tab's relay).
    """
    env = os.environ if environ is None else environ
    if explicit:
        return Resolved(explicit, "--agent")
    if env.get(AGENT_ENV):
        return Resolved(env[AGENT_ENV], f"${AGENT_ENV}")
    if host == "cursor":
        folder = workspace if workspace and "${" not in workspace else None
        folder = folder or env.get(WORKSPACE_ENV) or None
        if folder and "${" not in folder:
            return Resolved(cursor_agent(folder), f"the Cursor window's folder {folder}")
    if use_tabs:
        tab = tabs.find(env, of=process)
        if tab is not None:
            return Resolved(tab.agent, f"this tab ({tab.host} process {tab.process})")
    if host is not None and session:
        return Resolved(host_agent(host, session), "the hook's session id")
    if env.get(CLAUDE_SESSION_ENV):
        return Resolved(host_agent("claude", env[CLAUDE_SESSION_ENV]), f"${CLAUDE_SESSION_ENV}")
    if env.get(CODEX_THREAD_ENV):
        return Resolved(host_agent("codex", env[CODEX_THREAD_ENV]), f"${CODEX_THREAD_ENV}")
    return None


def resolve_agent(
    explicit: str | None = None, environ: Mapping[str, str] | None = None
) -> Resolved:
    """The agent name by the rule above, for a command run in a shell."""
    env = os.environ if environ is None else environ
    return identify(explicit=explicit, environ=env) or last_resort(env)


def last_resort(environ: Mapping[str, str], terminal: str | None = None) -> Resolved:
    """Rule 7 for a command run in a shell: on a terminal, the human; else the session.

    `terminal` is the session leader's controlling terminal (`pts3`, or `session`
    without one); None reads it.
    """
    if terminal is None:
        terminal = controlling_terminal(tabs.session_id())
    if terminal != "session":
        return Resolved(human_agent(environ), f"your terminal ({terminal}): the person here")
    return Resolved(terminal_session_agent(environ), "this session, which has no terminal")


def cursor_agent(folder: str) -> str:
    """`cursor-<folder name>-<4 hex>`: one name per Cursor window's workspace folder."""
    real = os.path.realpath(folder)
    digest = hashlib.sha1(real.encode()).hexdigest()[:4]
    return f"cursor-{slug(os.path.basename(real.rstrip('/')))}-{digest}"


def default_agent(environ: Mapping[str, str] | None = None) -> str:
    return resolve_agent(None, environ).value


def terminal_session_agent(environ: Mapping[str, str] | None = None) -> str:
    """`<user>-<terminal>-<leader pid>-<hash>` for this process's session.

    The terminal is the session leader's controlling terminal (`pts3`), or
    `session` without one. Not the leader's program name: a shell that runs
    its last command in its own place (`bash -c 'a; b'` execs `b`) changes
    it, and one session would have two names. The pid and start time do not
    change on exec.
    """
    env = os.environ if environ is None else environ
    user = slug(env.get("USER") or env.get("LOGNAME") or _login_name())
    leader = tabs.session_id()
    _, start = process_name_and_start(leader)
    digest = hashlib.sha1(f"{leader}:{start}".encode()).hexdigest()[:4]
    return f"{user}-{controlling_terminal(leader)}-{leader}-{digest}"


def controlling_terminal(pid: int) -> str:
    """`pts3`, `tty1`, or `session` when the process has no terminal (or it is unknown)."""
    if not sys.platform.startswith("linux"):
        return "session"
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            raw = stat.read().decode(errors="replace")
    except OSError:
        return "session"
    tty_nr = int(raw[raw.rindex(")") + 2 :].split()[4])
    major, minor = (tty_nr >> 8) & 0xFFF, (tty_nr & 0xFF) | ((tty_nr >> 12) & 0xFFF00)
    if tty_nr == 0:
        return "session"
    if 136 <= major <= 143:  # Unix98 pseudo-terminals
        return f"pts{(major - 136) * 256 + minor}"
    return f"tty{minor}" if major == 4 else f"tty{major}.{minor}"


def _login_name() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):
        return "user"


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_.]+", "-", text.lower()).strip("-") or "proc"


def process_name_and_start(pid: int) -> tuple[str, str]:
    """A process's short name and start time, or placeholders if it cannot be read."""
    found = tabs.process(pid)
    return (found.name.lstrip("-"), found.started) if found else ("session", "?")


def resolve_project(
    explicit: str | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> Resolved:
    """The project by the rule above."""
    env = os.environ if environ is None else environ
    if explicit:
        return Resolved(explicit, "--project")
    if env.get(PROJECT_ENV):
        return Resolved(env[PROJECT_ENV], f"${PROJECT_ENV}")
    top = main_worktree(cwd)
    if top is not None:
        return Resolved(top, "the git repository's main worktree")
    here = os.path.realpath(os.fspath(cwd) if cwd is not None else os.getcwd())
    return Resolved(here, "the current directory (no git repository here)")


def default_project(
    environ: Mapping[str, str] | None = None, cwd: str | os.PathLike[str] | None = None
) -> str:
    return resolve_project(None, environ, cwd).value


CLAUDE_PROJECT_DIR_ENV = "CLAUDE_PROJECT_DIR"


def host_project(
    environ: Mapping[str, str] | None = None, cwd: str | os.PathLike[str] | None = None
) -> Resolved:
    """The board for something a host started (an MCP server, a hook): `$COORD_PROJECT`,
    else the board of `$CLAUDE_PROJECT_DIR`, else that of `cwd` (or the working directory)."""
    env = os.environ if environ is None else environ
    if env.get(PROJECT_ENV):
        return resolve_project(None, env)
    directory = env.get(CLAUDE_PROJECT_DIR_ENV)
    if directory:
        found = resolve_project(None, {}, cwd=directory)
        return Resolved(found.value, f"${CLAUDE_PROJECT_DIR_ENV}: {found.source}")
    return resolve_project(None, env, cwd)

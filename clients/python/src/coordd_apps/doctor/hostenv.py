"""How each host starts coord's MCP server: the command its configuration names, the
working directory, and exactly the environment the host gives it (issue 43).

A surface's board depends on its environment (the socket comes from
`$XDG_RUNTIME_DIR` or `$TMPDIR`, the board a daemon it starts serves from
`$XDG_STATE_HOME`), and the hosts do not pass the user's on:

- **Codex** (0.171.0, measured: a server that wrote its environment to a file,
  started by `codex app-server`) passes `CODEX_DEFAULT_ENV` only (`HOME`,
  `LANG`, `LC_ALL`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `TMPDIR`, `TZ`, `USER`),
  then each variable of the server table's `env_vars` that is set in its own
  environment, then the table's `env` (which wins);
- **Claude Code** passes its whole environment, the entry's `env` (with
  `${VAR}` and `${VAR:-default}` expanded, in command and args too) and
  `CLAUDECODE=1` and `CLAUDE_PROJECT_DIR`;
- **Cursor** gives servers "a curated environment that dropped inherited
  variables" (HOSTS.md, receptron/mulmoterminal#2070; Cursor cannot be run
  here). Assumed: the MCP SDK's default list (`MCP_DEFAULT_ENV`) plus the
  entry's `env`, with `${env:NAME}`, `${workspaceFolder}` and `${userHome}`
  expanded. The smallest plausible set, so a setup that works here works there;
- **an MCP client with the SDK's defaults** (the MCP Inspector): `HOME`,
  `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER` and nothing else.

`coord doctor` starts each (`doctor.boards`) with two additions that leave
nothing behind: `COORD_NO_AUTOSTART=1` (the probe must never start a daemon)
and `COORD_MCP_INPROCESS=unless-running` (nor a shared MCP server that
outlives it). So a probe takes the path a tab takes, the relay to the shared
server already running for that environment (a few hundredths of a second),
and only where none runs serves itself in-process (the MCP SDK's import:
about two seconds of CPU).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coordd_apps.setup.hosts import CODEX_DEFAULT_ENV, SERVER_KEY

#: What the MCP SDK's stdio client passes of its own (`mcp.client.stdio`'s default list on
#: POSIX); the Inspector starts servers through it.
MCP_DEFAULT_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
#: Added to every probe's environment: nothing is started that outlives the doctor.
PROBE_ENV = {"COORD_NO_AUTOSTART": "1", "COORD_MCP_INPROCESS": "unless-running"}

_CLAUDE_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_CURSOR_VAR = re.compile(r"\$\{(env:[A-Za-z_][A-Za-z0-9_]*|workspaceFolder|userHome)\}")


@dataclass(frozen=True)
class Surface:
    """One way coord's MCP server is started: by whom, with what, in which environment."""

    #: The host (`coord setup NAME` sets it up), or "mcp client".
    name: str
    #: Who starts it, in the report's words.
    title: str
    #: Where the command was read (a config file), for the report.
    source: str
    command: str
    args: list[str]
    #: The environment the host gives the server, before `PROBE_ENV`.
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None

    @property
    def spawn(self) -> tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]]:
        """What makes two surfaces the same process to start (probed once)."""
        return self.command, tuple(self.args), tuple(sorted(self.env.items()))


def _only(environ: Mapping[str, str], names: tuple[str, ...] | list[str]) -> dict[str, str]:
    return {name: environ[name] for name in names if name in environ}


def _strings(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(k): str(v) for k, v in value.items() if isinstance(v, (str, int, float, bool))}


def _args(value: Any) -> list[str]:
    return [str(a) for a in value] if isinstance(value, list) else []


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text())
    except (OSError, ValueError):
        return {}


# -- Codex ----------------------------------------------------------------------------


def codex_env(environ: Mapping[str, str], table: Mapping[str, Any]) -> dict[str, str]:
    """Codex's environment for a server `table` (`[mcp_servers.X]`), from Codex's own."""
    env = _only(environ, CODEX_DEFAULT_ENV)
    listed = table.get("env_vars")
    env |= _only(environ, [str(n) for n in listed] if isinstance(listed, list) else [])
    return env | _strings(table.get("env"))


def codex_home(environ: Mapping[str, str], home: Path) -> Path:
    return Path(environ["CODEX_HOME"]) if environ.get("CODEX_HOME") else home / ".codex"


def codex_surface(environ: Mapping[str, str], home: Path, top: Path) -> Surface | None:
    """The user's `[mcp_servers.coord]`, with a trusted project's own keys over it."""
    user_file = codex_home(environ, home) / "config.toml"
    user = _read_toml(user_file)
    table = dict(user.get("mcp_servers", {}).get(SERVER_KEY) or {})
    source = str(user_file)
    trust = (user.get("projects") or {}).get(str(top)) or {}
    if isinstance(trust, dict) and trust.get("trust_level") == "trusted":
        project_file = top / ".codex" / "config.toml"
        theirs = _read_toml(project_file).get("mcp_servers", {}).get(SERVER_KEY)
        if isinstance(theirs, dict):
            table |= theirs
            source = f"{source} and {project_file}"
    if "command" not in table or table.get("enabled") is False:
        return None
    env = codex_env(environ, table)
    command, args = str(table["command"]), _args(table.get("args"))
    return Surface("codex", "Codex", source, command, args, env, str(top))


# -- Claude Code ----------------------------------------------------------------------


def claude_expand(text: str, environ: Mapping[str, str]) -> str:
    """Claude Code's `${VAR}` and `${VAR:-default}` (never `$VAR`)."""
    return _CLAUDE_VAR.sub(lambda m: environ.get(m[1]) or (m[2] or ""), text)


def claude_entry(home: Path, top: Path) -> tuple[dict[str, Any], str] | None:
    """coord's server entry as Claude Code picks it: local (this folder in
    ~/.claude.json), then the worktree's .mcp.json, then the user's."""
    config = _read_json(home / ".claude.json")
    config = config if isinstance(config, dict) else {}
    project = (config.get("projects") or {}).get(str(top)) or {}
    project_file = _read_json(top / ".mcp.json")
    candidates = [
        ((project.get("mcpServers") or {}) if isinstance(project, dict) else {}, "~/.claude.json"),
        ((project_file or {}).get("mcpServers") or {}, str(top / ".mcp.json")),
        (config.get("mcpServers") or {}, str(home / ".claude.json")),
    ]
    for servers, source in candidates:
        entry = servers.get(SERVER_KEY) if isinstance(servers, dict) else None
        if isinstance(entry, dict) and entry.get("command"):
            return entry, source
    return None


def claude_surface(environ: Mapping[str, str], home: Path, top: Path) -> Surface | None:
    found = claude_entry(home, top)
    if found is None:
        return None
    entry, source = found
    env = dict(environ) | {"CLAUDECODE": "1", "CLAUDE_PROJECT_DIR": str(top)}
    env |= {k: claude_expand(v, environ) for k, v in _strings(entry.get("env")).items()}
    command = claude_expand(str(entry["command"]), environ)
    args = [claude_expand(a, environ) for a in _args(entry.get("args"))]
    return Surface("claude", "Claude Code", source, command, args, env, str(top))


# -- Cursor and the SDK's default ---------------------------------------------------------


def cursor_expand(text: str, environ: Mapping[str, str], top: Path, home: Path) -> str:
    def one(match: re.Match[str]) -> str:
        name = match[1]
        if name == "workspaceFolder":
            return str(top)
        if name == "userHome":
            return str(home)
        return environ.get(name[4:], "")

    return _CURSOR_VAR.sub(one, text)


def cursor_surface(environ: Mapping[str, str], home: Path, top: Path) -> Surface | None:
    for path in (top / ".cursor" / "mcp.json", home / ".cursor" / "mcp.json"):
        doc = _read_json(path)
        servers = doc.get("mcpServers") if isinstance(doc, dict) else None
        entry = servers.get(SERVER_KEY) if isinstance(servers, dict) else None
        if isinstance(entry, dict) and entry.get("command"):
            env = _only(environ, MCP_DEFAULT_ENV)
            extra = _strings(entry.get("env"))
            env |= {k: cursor_expand(v, environ, top, home) for k, v in extra.items()}
            args = [cursor_expand(a, environ, top, home) for a in _args(entry.get("args"))]
            command = cursor_expand(str(entry["command"]), environ, top, home)
            return Surface("cursor", "Cursor", str(path), command, args, env, str(top))
    return None


def default_client_surface(environ: Mapping[str, str], coord: str, top: Path) -> Surface:
    """`coord mcp` as an MCP client with the SDK's defaults starts it (the Inspector)."""
    env = _only(environ, MCP_DEFAULT_ENV)
    title, source = "an MCP client (the Inspector)", "the MCP SDK's default environment"
    return Surface("mcp client", title, source, coord, ["mcp"], env, str(top))


def host_surfaces(environ: Mapping[str, str], home: Path, top: Path, coord: str) -> list[Surface]:
    """Every configured surface, and the SDK default's; one per distinct process to start."""
    found = [
        claude_surface(environ, home, top),
        codex_surface(environ, home, top),
        cursor_surface(environ, home, top),
        default_client_surface(environ, coord, top),
    ]
    return [surface for surface in found if surface is not None]


def probe_env(surface: Surface) -> dict[str, str]:
    """The environment the probe starts `surface` with (`PROBE_ENV` added)."""
    return {**surface.env, **PROBE_ENV}


def would_autostart(surface: Surface) -> bool:
    """Whether this surface, started by its host, may start a daemon."""
    return surface.env.get("COORD_NO_AUTOSTART", "") in ("", "0") and "--no-start" not in (
        surface.args
    )


__all__ = [
    "MCP_DEFAULT_ENV",
    "PROBE_ENV",
    "Surface",
    "claude_expand",
    "claude_surface",
    "codex_env",
    "codex_surface",
    "cursor_surface",
    "default_client_surface",
    "host_surfaces",
    "probe_env",
    "would_autostart",
]

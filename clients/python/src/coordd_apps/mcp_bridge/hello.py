"""A relay's hello: the tab it speaks for, worked out as `coord mcp` always did.

The relay sends one JSON line before any MCP traffic: its arguments (all of
`coord`'s, e.g. `--socket S mcp --host cursor`), its environment, working
directory and pid. They are parsed here by the `coord` parser itself, so a
flag means what it means on the command line; the socket, autostart and
`--agent` are read from the tab's environment, not the server's. A hello
that does not parse is refused, and the relay then runs the CLI in-process,
which words the error exactly as it always has.
"""

from __future__ import annotations

import json
from typing import Any

from coordd_apps.cli import load_groups
from coordd_apps.cli.registry import Parser, UsageError, build_parser
from coordd_apps.mcp_bridge.session import Tab
from coordd_client.autostart import autostart_enabled
from coordd_client.discovery import SocketRoute

_parser: Parser | None = None


class Refused(Exception):
    """A hello that names no tab (the message goes back to the relay)."""


def tab_of(line: bytes, peer_pid: int | None) -> Tab:
    """The tab a hello line speaks for. `peer_pid` is the kernel's word for the relay's
    pid (`SO_PEERCRED`), preferred to the one the hello states."""
    try:
        hello = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise Refused("the hello is not JSON") from exc
    if not isinstance(hello, dict):
        raise Refused("the hello is not an object")
    argv, env, cwd, pid = (hello.get(k) for k in ("argv", "env", "cwd", "pid"))
    if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
        raise Refused("argv must be a list of strings")
    if not (isinstance(env, dict) and all(isinstance(v, str) for v in env.values())):
        raise Refused("env must map names to strings")
    if not isinstance(cwd, str) or not isinstance(pid, int):
        raise Refused("cwd must be a string and pid a number")
    args = _parse(argv)
    tab_env: dict[str, str] = dict(env)
    if getattr(args, "agent", None):  # --agent wins, as in `cli/mcp.py`
        tab_env["COORD_AGENT"] = args.agent
    return Tab(
        env=tab_env,
        cwd=cwd,
        process=peer_pid or pid,
        host=getattr(args, "host", None),
        project=getattr(args, "project", None),
        route=SocketRoute.resolve(getattr(args, "socket", None), tab_env),
        autostart=autostart_enabled(bool(getattr(args, "no_start", False)), tab_env),
    )


def _parse(argv: list[str]) -> Any:
    global _parser
    if _parser is None:
        load_groups(("mcp",))
        _parser = build_parser("coord")
    try:
        args = _parser.parse_args(argv)
    except UsageError as exc:
        raise Refused(str(exc)) from exc
    except SystemExit as exc:  # --help, --version: the relay leaves those to the CLI
        raise Refused("not a command to relay") from exc
    if getattr(args, "command", None) != "mcp":
        raise Refused("not a coord mcp command line")
    return args

"""The daemon checks: the socket every surface of this shell would use answers (its
pid and board), and a client with only what Codex passes its MCP servers
(`setup.hosts.CODEX_DEFAULT_ENV`, measured on Codex 0.171.0: no `$XDG_RUNTIME_DIR`,
no `$XDG_STATE_HOME`, no `$COORDD_SOCKET`) reaches the same daemon (`discovery`).

This one is worked out in this process, without starting anything, so it holds
without the MCP SDK; `doctor.boards` then starts each host's server for real.
A second daemon on a second board is the failure this guards against: each
surface would see only its own half of the claims.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coordd_apps.daemon_age import older_daemon
from coordd_apps.doctor.findings import Finding
from coordd_apps.setup.hosts import CODEX_DEFAULT_ENV
from coordd_client import methods
from coordd_client.client import Client
from coordd_client.discovery import SocketRoute, answers
from coordd_wire.errors import CoordError
from coordd_wire.location import SOCKET_ENV
from coordd_wire.rendezvous import live_daemons

#: What the reduced environment of a host's children lacks, said in the report (all but
#: `CODEX_DEFAULT_ENV` goes; these are the ones that move the socket or the board).
REDUCED_DROPS = ("XDG_RUNTIME_DIR", "XDG_STATE_HOME", SOCKET_ENV)


def server_info(socket: Path) -> dict[str, Any] | None:
    if not answers(socket):
        return None
    try:
        with Client(socket, timeout_s=10) as client:
            info: dict[str, Any] = client.send(methods.server_info().as_type(dict))
    except (CoordError, OSError):
        return None
    return info


def store_findings(info: dict[str, Any]) -> list[Finding]:
    """The daemon's integrity check of its SQLite file (docs/PROTOCOL-1.2.md section 3c):
    a finding only when it found damage, since the daemon then refuses every write."""
    store = info.get("store") or {}
    check = store.get("check") or {}
    if check.get("state") != "damaged":
        return []
    path = store.get("location", "?")
    problems = "; ".join(check.get("problems") or []) or "?"
    return [
        Finding(
            "daemon",
            "store",
            ok=False,
            detail=f"the database {path} is damaged ({problems}): the daemon refuses every write",
            fix=f"coordd check --db {path}; then restore a copy made with `coordd backup`"
            " (stop coordd, move the damaged file and its -wal/-shm aside, put the copy in"
            " its place), or move it aside to start with an empty board",
            data={"store": path, "problems": check.get("problems") or []},
        )
    ]


def unannounced(board_id: str | None) -> bool:
    """No rendezvous record names `board_id`, which a daemon answering here serves."""
    return board_id is not None and board_id not in {r.board_id for r in live_daemons()}


def reduced_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """Exactly what Codex passes an MCP server with no `env_vars` (issue 43: keeping
    `$XDG_STATE_HOME` here hid a server that started a second board)."""
    return {k: v for k, v in environ.items() if k in CODEX_DEFAULT_ENV}


def reduced_socket(environ: Mapping[str, str]) -> tuple[Path, Path | None, str]:
    """Where a client with the reduced environment would go: (the path it derives,
    the socket it would use or None, how it got there)."""
    reduced = reduced_environment(environ)
    route = SocketRoute.resolve(None, reduced)
    if answers(route.path):
        return route.path, route.path, "derived"
    try:
        found = route.fallback(reduced)
    except CoordError:  # several boards are live: `doctor.boards` names them
        return route.path, None, "several boards"
    if found is None:
        return route.path, None, "none"
    return route.path, found.socket, found.source


def check_daemon(route: SocketRoute, socket: Path, autostart: bool) -> list[Finding]:
    findings = []
    info = server_info(socket)
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
        board = info.get("board_id")
        findings.append(
            Finding(
                "daemon",
                "daemon",
                ok=True,
                detail=f"coordd {info.get('version', '?')}, pid {info['pid']}, board"
                f" {board or '? (a daemon from before board ids)'}, socket {socket}{via}",
                data={
                    "socket": str(socket),
                    "pid": info["pid"],
                    "version": info.get("version"),
                    "board_id": board,
                    "build": info.get("build"),
                },
            )
        )
        findings += store_findings(info)
        older = older_daemon(info, autostart)
        if older is not None:
            builds = {"running": older["running"], "installed": older["installed"]}
            findings.append(
                Finding("daemon", "upgrade", False, older["detail"], older["command"], data=builds)
            )
    derived, reached, how = reduced_socket(os.environ)
    reached_info = server_info(reached) if reached is not None else None
    label = (
        "reduced environment (only what Codex passes an MCP server: no XDG_RUNTIME_DIR,"
        " XDG_STATE_HOME or COORDD_SOCKET)"
    )
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
    elif how == "several boards":
        findings.append(
            Finding(
                "daemon",
                "reduced environment",
                ok=False,
                detail=f"{label}: derives {derived}, where no daemon answers, and finds several"
                " live boards: it refuses to choose (the boards section names them)",
                fix=None,
                data=data,
            )
        )
    elif reached_info is None and unannounced(info.get("board_id")):
        # One cause, one finding: the boards section's `rendezvous` names it and the fix.
        findings.append(
            Finding(
                "daemon",
                "reduced environment",
                ok=True,
                detail=f"{label}: derives {derived}, where no daemon answers, and finds none"
                " elsewhere: this daemon is missing from the rendezvous (see boards)",
                note=True,
                data=data,
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
        # Two live boards: one cause, which the boards section reports once with its
        # one command; said here as a note, not a second problem.
        split = reached_info.get("board_id") != info.get("board_id")
        pin = f"stop the second daemon, or pin the socket: --socket {socket}"
        findings.append(
            Finding(
                "daemon",
                "reduced environment",
                ok=split,
                detail=f"{label}: reaches another daemon (pid {reached_info['pid']} on {reached},"
                f" board {reached_info.get('board_id')})",
                fix=None if split else pin,
                note=split,
                data=data,
            )
        )
    else:
        source = {
            "rendezvous": "the rendezvous under the home directory",
            "record": "the database's lock-file record",
            "runtime dir": "/run/user/<uid>",
        }
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

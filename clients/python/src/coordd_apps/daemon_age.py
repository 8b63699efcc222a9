"""Whether the running daemon is older than the coordd installed here, and the command
that restarts it without losing anything (docs/PROTOCOL-1.2.md section 1c).

`pip install` of a newer coordd replaces the files; the daemon keeps running the
code it loaded until it is restarted. It names that code in `server.info.build`,
and the installed code's id is taken from the files now (`coordd_wire.build`): a
difference, or a daemon that names none, is a daemon older than what is
installed. Where the daemon's code is not installed (the client alone), there is
nothing to compare with, and nothing is said.

Restarting loses nothing: the store is on disk, a stop on SIGTERM is clean (it
withdraws its rendezvous record), the next `coord` command, hook or MCP tool
call starts the installed daemon on the same board (the socket's record names
it), agents' leases that lapse in between are extended by `--restart-grace`,
and MCP servers reconnect (docs/OPERATIONS.md, "Upgrading").
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coordd_wire.build import daemon_build

#: The systemd unit `coordd service install` writes (`systemd/coordd.service`).
SERVICE_UNIT = "coordd.service"


def installed_version() -> str:
    """The installed coordd's version number, or "?" (a source tree on the path)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("coordd")
    except PackageNotFoundError:
        return "?"


def restart_command(pid: int) -> str:
    """What restarts daemon `pid` on the installed code, losing nothing (see above)."""
    if under_systemd(pid):
        return f"systemctl --user restart {SERVICE_UNIT}"
    return f"kill {pid}"


def under_systemd(pid: int) -> bool:
    """Whether `pid` runs in the user unit `coordd service install` wrote (Linux)."""
    try:
        return SERVICE_UNIT in Path(f"/proc/{pid}/cgroup").read_text()
    except OSError:
        return False


def older_daemon(info: Mapping[str, Any], autostart: bool = True) -> dict[str, Any] | None:
    """When the daemon that answered `server.info` with `info` runs older code than the
    installed one: what to say and the command; None when it runs the installed code,
    or when no daemon code is installed here to compare with."""
    installed = daemon_build()
    running = info.get("build")
    if installed is None or running == installed:
        return None
    pid = int(info["pid"])
    version = installed_version()
    command = restart_command(pid)
    said = f"coordd {info.get('version', '?')}" + (
        f", build {running}" if running else ", from before build ids"
    )
    detail = (
        f"the running daemon (pid {pid}, {said}) is older than the installed coordd"
        f" {version} (build {installed}): it runs the code it loaded at its start."
        " Restart it; nothing is lost (the board is on disk, leases wait out the restart)"
    )
    if not command.startswith("systemctl"):
        detail += (
            "; the next coord command starts the installed daemon on the same board"
            if autostart
            else "; then start it as you started it (COORD_NO_AUTOSTART is set)"
        )
    return {"detail": detail, "command": command, "running": running, "installed": installed}

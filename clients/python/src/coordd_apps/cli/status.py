"""`coord status`: is a daemon running? It never starts one."""

from __future__ import annotations

from typing import Any

from coordd_apps.cli.context import EXIT_ERROR, EXIT_OK, Context
from coordd_apps.cli.registry import command
from coordd_apps.wording import render
from coordd_client import methods
from coordd_client.client import Client
from coordd_wire.errors import DaemonUnavailable


@command("status", "is a daemon running? (never starts one)", "coord status --json")
def status(ctx: Context) -> int:
    try:
        with Client(ctx.socket, timeout_s=10) as client:
            info = client.send(methods.server_info().as_type(dict))
    except DaemonUnavailable:
        ctx.emit(
            {"running": False, "socket": str(ctx.socket)}, f"no daemon answers on {ctx.socket}"
        )
        return EXIT_ERROR
    report = {"running": True, "socket": str(ctx.socket), **info}
    counts = ", ".join(f"{state} {n}" for state, n in info["counts"].items())
    since = render.relative(info["started_at"])
    human = "\n".join(
        [
            f"coordd {info['version']} running (pid {info['pid']}, since {since})",
            f"socket:   {ctx.socket}",
            _store_line(info),
            f"tasks:    {counts}",
            f"last seq: {info['last_seq']}",
        ]
    )
    ctx.emit(report, human)
    return EXIT_OK


def _store_line(info: dict[str, Any]) -> str:
    """The SQLite file, or the team store with this node and its live peers."""
    store = info.get("store") or {"backend": "sqlite", "location": info.get("db_path")}
    if store["backend"] == "sqlite":
        return f"database: {store['location']}"
    peers = ", ".join(peer["node"] for peer in info.get("peers", [])) or "none live"
    return f"store:    {store['location']} (team mode, node {info.get('node')}; peers: {peers})"

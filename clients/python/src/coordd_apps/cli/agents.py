"""Commands about agents: who am I, and who else is here."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

from coordd_apps.cli.context import EXIT_OK, Context
from coordd_apps.cli.registry import arg, command
from coordd_apps.cli.seen import note_if_unseen
from coordd_apps.daemon_age import older_daemon
from coordd_apps.wording import render
from coordd_apps.wording.advice import plural
from coordd_client import boards, tabs
from coordd_client.client import Client
from coordd_client.identity import AGENT_ENV
from coordd_client.tab_ends import report_ended
from coordd_client.text import clean, parse_time
from coordd_wire.errors import CoordError
from coordd_wire.wire import AgentInfo, ReleaseAgentResult

#: `agents` hides identities not seen for this long, unless --all.
STALE_AFTER = timedelta(days=1)


@command(
    "whoami",
    "the agent name and project coord uses here, and where each came from",
    "coord whoami --export",
    arg("--export", action="store_true", help=f"print the `export {AGENT_ENV}=...` line to pin it"),
)
def whoami(ctx: Context) -> int:
    who, where = ctx.who, ctx.where
    if ctx.args.export:
        line = f"export {AGENT_ENV}={_shell_quote(who.value)}"
        ctx.emit({"agent": who.value, "export": line}, line)
        return EXIT_OK
    board = which_board(ctx)
    report = {
        "agent": who.value,
        "agent_source": who.source,
        "project": where.value,
        "project_source": where.source,
        "board": board,
    }
    human = (
        f"agent:   {clean(who.value)}  (from {who.source})\n"
        f"project: {clean(where.value)}  (from {where.source})\n"
        f"board:   {clean(_board_line(board))}"
    )
    older = board.get("older")
    if older is not None:  # each line cleaned on its own: `clean` escapes a newline
        human += f"\ndaemon:  {clean(older['detail'])}\n         restart: {clean(older['command'])}"
    ctx.emit(report, human)
    return EXIT_OK


def which_board(ctx: Context) -> dict[str, Any]:
    """The board this shell reaches (docs/PROTOCOL-1.2.md section 1b), asked without
    starting a daemon: its id, socket and store, and the tab's board when they differ."""
    try:
        socket = ctx.socket
        with Client(socket, timeout_s=5) as client:
            info = client.server_info()
    except CoordError as exc:
        return {"board_id": None, "error": exc.message, "kind": exc.data.get("kind", exc.kind)}
    tab = tabs.find()
    board: dict[str, Any] = {
        "board_id": info.board_id,
        "socket": str(socket),
        "older": older_daemon({"pid": info.pid, "version": info.version, "build": info.build}),
        "store": info.store.location if info.store is not None else info.db_path,
        "tab_board": tab.board if tab is not None else None,
    }
    refusal = boards.mismatch(tab, info.board_id, socket)
    if refusal is not None:
        board["error"] = refusal.message
        board["kind"] = refusal.kind
    return board


def _board_line(board: dict[str, Any]) -> str:
    if board["board_id"] is None and "error" in board:
        return f"none reached ({board['error']})"
    line = f"{board['board_id']}  ({board['store']}, on {board['socket']})"
    return f"{line}\n         {board['error']}" if "error" in board else line


def _shell_quote(text: str) -> str:
    if text and all(c.isalnum() or c in "-_.:@+/" for c in text):
        return text
    return "'" + text.replace("'", "'\\''") + "'"


@command(
    "agents",
    "list agents, when they were last seen (or that they are gone), what they hold",
    "coord agents --all",
    arg("--all", action="store_true", help="also agents not seen for a day"),
)
def agents(ctx: Context) -> int:
    with ctx.client() as client:
        gone = tabs.ended()  # tabs here that exited without their session-end hook
        if gone:
            report_ended(client, ctx.agent, gone)
            tabs.prune()
        result = client.agents()
        reservations = Counter(r.agent for r in client.reservations().reservations)
        slots = Counter(s.agent for s in client.slots().leases) if client.supports("slots") else {}
    now = datetime.now(UTC)
    shown = [
        a for a in result.agents if ctx.args.all or now - parse_time(a.last_seen) < STALE_AFTER
    ]
    rows = [
        f"{clean(a.agent):<32}  {_presence(a):<32}"
        f"  holding {_holdings(a.holding, reservations.get(a.agent, 0), slots.get(a.agent, 0))}"
        for a in shown
    ]
    hidden = len(result.agents) - len(shown)
    if hidden:
        rows.append(f"({hidden} not seen for a day: coord agents --all)")
    ctx.emit(type(result)(agents=shown), "\n".join(rows) or "no agents yet")
    return EXIT_OK


@command(
    "release-agent",
    "let go of everything a dead agent holds: claims, reservations, assignments, slots",
    "coord release-agent codex-mcp-client-4242-1a2b --reason 'tab crashed'",
    arg("of", metavar="NAME", help="the agent whose holdings go (see coord agents)"),
    arg("--reason", help="why, kept in each task's history"),
    arg("--here", action="store_true", help="only in this project (default: every project)"),
)
def release_agent(ctx: Context) -> int:
    project = ctx.where.value if ctx.args.here else None
    with ctx.client() as client:
        result = client.release_agent(
            ctx.args.of, ctx.agent, project=project, reason=ctx.args.reason
        )
        if _released_nothing(result):
            note_if_unseen(client, ctx.args.of, "nothing was released")
    where = "here" if project is not None else "in every project"
    human = (
        f"released {clean(ctx.args.of)} {where}: {plural(result.claims, 'claim')},"
        f" {plural(result.reservations, 'reservation')},"
        f" {plural(result.unassigned, 'assignment')}, {plural(result.slots, 'slot')};"
        f" recorded as {clean(ctx.agent)}"
    )
    ctx.emit(result, human)
    return EXIT_OK


def _presence(agent: AgentInfo) -> str:
    """ "gone (ended 2 min ago)" for an agent whose tab exited (`agent.end`), else when it
    was last seen: a tab that exited is not "last seen just now"."""
    if agent.ended_at is not None:
        return f"gone (ended {render.relative(agent.ended_at)})"
    return f"last seen {render.relative(agent.last_seen)}"


def _holdings(claims: int, reservations: int, slots: int) -> str:
    """ "2 tasks, 1 reservation, 1 slot": `agent.list` counts claims alone, and an agent
    holding nothing but a reservation or a lock is not idle."""
    counts = [(claims, "task"), (reservations, "reservation"), (slots, "slot")]
    said = [f"{n} {what}{'' if n == 1 else 's'}" for n, what in counts if n]
    return ", ".join(said) or "nothing"


def _released_nothing(result: ReleaseAgentResult) -> bool:
    return result.claims == result.reservations == result.unassigned == result.slots == 0

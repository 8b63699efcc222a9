"""The `board` tool: what a tab needs at the start of a turn, bounded for a context window.

However big the board, it shows at most a handful of tasks per section, each
in a few fields with its title cut short; the counts say how much more
there is. Ranked as `coord prime` is (summary.py): the caller's claims and
reservations, what is assigned to it, ready work by priority, then who else
holds what. Bounded: at most `BOARD_CHARS` characters of JSON (about 1,200
tokens at 4 a token; `tests/system/test_mcp.py` and `test_context_bounds.py`
measure it), for 10 tasks or 100,000.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec
from mcp.server.mcpserver import Context

from coordd_apps import summary
from coordd_apps.mcp_bridge.bridge import Bridge
from coordd_apps.wording import render_messages
from coordd_client import methods, methods_edits, methods_messages, presence
from coordd_client.human import is_person
from coordd_wire import wire, wire_messages
from coordd_wire.errors import CoordError, InvalidParams, MethodNotFound
from coordd_wire.server_info import ServerInfo
from coordd_wire.wire_edits import RecentResult

MY_CLAIMS_SHOWN = 10
MY_RESERVATIONS_SHOWN = 5
ASSIGNED_SHOWN = 5
READY_SHOWN = 8
AGENTS_SHOWN = 8
#: Other agents' edits of this tab's files in other worktrees (issue 33).
EDITS_SHOWN = 3
#: Unread messages shown (issue 34), each one line of at most `MESSAGE_CHARS`.
MESSAGES_SHOWN = 3
MESSAGE_CHARS = 200
TITLE_CHARS = 80
#: Characters of an agent's name or a kind shown (as summary.NAME_CHARS).
NAME_CHARS = 64
#: Recent events read to see who acted in the project lately (as `coord prime` does).
LOOKBACK_EVENTS = 500
#: Counting stops after this many pages of 1,000 per state (the count then says "at least").
MAX_COUNT_PAGES = 10
STATES = ("pending", "claimed", "done", "failed", "cancelled")
#: What the rows above can add up to: 28 tasks of at most ~190 characters of JSON, five
#: reservations, eight agents (names cut at `NAME_CHARS`) and the rest; three edits
#: elsewhere (issue 33) fit in what `fit` cuts first when a board is full; then the
#: unread messages' lines (issue 34) and their JSON quoting.
BOARD_CHARS = 4800 + MESSAGES_SHOWN * (MESSAGE_CHARS + 4) + 60


def _short(task: wire.Task) -> dict[str, Any]:
    short: dict[str, Any] = {
        "id": task.id,
        "kind": _cut(task.kind, NAME_CHARS),
        "title": _cut(task.title, TITLE_CHARS),
        "priority": task.priority,
        "state": task.state,
    }
    if task.state == "claimed":
        short.update(fence=task.fence, lease_expires_at=task.lease_expires_at)
    if task.blocked_by:
        short["blocked_by"] = task.blocked_by[:5]
    return short


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _reservation(r: wire.Reservation) -> dict[str, Any]:
    return {
        "pattern": _cut(r.pattern, TITLE_CHARS),
        "exclusive": r.exclusive,
        "task_id": r.task_id,
        "expires_at": r.expires_at,
    }


async def _all(bridge: Bridge, ctx: Context, **filters: Any) -> tuple[list[wire.Task], bool]:
    """Every task matching, up to `MAX_COUNT_PAGES` pages; and whether it stopped short."""
    tasks: list[wire.Task] = []
    after = 0
    for _ in range(MAX_COUNT_PAGES):
        call = bridge.fill(methods.list_tasks(after_id=after, limit=1000, **filters), ctx)
        page: wire.ListResult = await bridge.link.typed(call)
        tasks += page.tasks
        if page.next_after_id is None:
            return tasks, False
        after = page.next_after_id
    return tasks, True


async def _urgent(bridge: Bridge, ctx: Context, **filters: Any) -> wire.ListResult:
    """One page of `task.list` in claim order (docs/PROTOCOL-1.2.md section 6c)."""
    call = bridge.fill(methods.list_tasks(order="urgent", **filters), ctx)
    page: wire.ListResult = await bridge.link.typed(call)
    return page


async def _all_urgent(bridge: Bridge, ctx: Context, **filters: Any) -> tuple[list[wire.Task], bool]:
    """`_all` read in claim order, the open states from their own indexes; by id."""
    tasks: list[wire.Task] = []
    page = await _urgent(bridge, ctx, limit=1000, **filters)
    for _ in range(MAX_COUNT_PAGES):
        tasks += page.tasks
        if page.next_after_id is None:
            return sorted(tasks, key=lambda t: t.id), False
        page = await _urgent(bridge, ctx, limit=1000, after_id=page.next_after_id,
                             after_priority=page.next_after_priority, **filters)  # fmt: skip
    return sorted(tasks, key=lambda t: t.id), True


#: The board's tasks: the caller's claims, every claim, what is assigned to the caller,
#: the ready tasks shown and how many there are, the counts by state, whether a read
#: stopped short, and the pending tasks read.
Tasks = tuple[
    list[wire.Task], list[wire.Task], list[wire.Task], list[wire.Task], int, dict[str, int],
    bool, list[wire.Task],
]  # fmt: skip


async def _tasks(bridge: Bridge, ctx: Context, agent: str) -> Tasks:
    """What is shown and the counts of the rest, asked of the daemon (section 6c); every
    open task, read and ranked here, from a daemon without it."""
    try:
        every = await _urgent(bridge, ctx, limit=1, counts=True)
    except InvalidParams:
        return await _tasks_paged(bridge, ctx, agent)
    claimed, cut = await _all_urgent(bridge, ctx, state="claimed")
    assigned, _ = await _all_urgent(bridge, ctx, state="pending", assignee=agent)
    ready_page = await _urgent(bridge, ctx, ready=True, open_to=agent, limit=READY_SHOWN,
                               counts=True)  # fmt: skip
    ready = ready_page.tasks
    total = (ready_page.counts or {}).get("pending", len(ready))
    counted = every.counts or {}
    counts: dict[str, int] = {state: counted.get(state, 0) for state in wire.STATES}
    mine = [t for t in claimed if t.claimed_by == agent]
    return mine, claimed, assigned, ready, total, counts, cut, [*ready, *assigned]


async def _tasks_paged(bridge: Bridge, ctx: Context, agent: str) -> Tasks:
    pending, pending_cut = await _all(bridge, ctx, state="pending")
    claimed, claimed_cut = await _all(bridge, ctx, state="claimed")
    mine = [t for t in claimed if t.claimed_by == agent]
    assigned = [t for t in pending if t.assignee == agent]
    ready = sorted(
        (t for t in pending if t.ready and t.assignee in (None, agent)),
        key=lambda t: (-t.priority, t.id),
    )
    counts = {"pending": len(pending), "claimed": len(claimed)}
    for state in ("done", "failed", "cancelled"):
        finished, _ = await _all(bridge, ctx, state=state)
        counts[state] = len(finished)
    cut = pending_cut or claimed_cut
    return mine, claimed, assigned, ready, len(ready), counts, cut, pending


async def board_result(bridge: Bridge, ctx: Context) -> dict[str, Any]:
    agent = bridge.agent(ctx).value
    now = datetime.now(UTC)
    tasks = await _tasks(bridge, ctx, agent)
    mine, claimed, assigned, ready, ready_total, counts, cut, pending = tasks
    holding: dict[str, list[int]] = {}
    for task in claimed:
        if task.claimed_by and task.claimed_by != agent:
            holding.setdefault(task.claimed_by, []).append(task.id)
    agents: wire.AgentsResult = await bridge.link.typed(methods.agents())
    # This project's agents at work, not every name the daemon knows (presence.py).
    project = bridge.project.value
    reserved: wire.ReservationsResult = await bridge.link.typed(
        methods.reservations(project=project)
    )
    info: ServerInfo = await bridge.link.typed(methods.server_info())
    recent: wire.EventsResult = await bridge.link.typed(
        methods.events_since(
            after_seq=max(0, info.last_seq - LOOKBACK_EVENTS),
            project=project,
            limit=LOOKBACK_EVENTS,
        )
    )
    seen = presence.scoped(
        agents.agents,
        now,
        holders=set(holding) | {r.agent for r in reserved.reservations},
        involved=presence.involved([*claimed, *pending], recent.events),
    )
    others = [
        {
            "agent": _cut(a.agent, NAME_CHARS),
            "last_seen": a.last_seen,
            "holding": holding.get(a.agent, [])[:5],
        }
        for a in seen
        if a.agent != agent and not is_person(a.agent)
    ]
    # The person is not another agent (issue 47 item 1): said apart, as `summary` does.
    named = {a.agent for a in seen} | set(holding)
    people = sorted(name for name in named if name != agent and is_person(name))
    the_human = summary.people_lines(people, holding, reserved.reservations)
    my_reservations = [r for r in reserved.reservations if r.agent == agent]
    elsewhere = await _edited_elsewhere(bridge, agent, project)
    hint = _hint(mine, ready, cut)
    unread = await _unread(bridge, ctx)
    return fit(
        {
            "agent": agent,
            "project": bridge.project.value,
            "my_claims": [_short(t) for t in mine[:MY_CLAIMS_SHOWN]],
            "my_reservations": [_reservation(r) for r in my_reservations[:MY_RESERVATIONS_SHOWN]],
            "edited_elsewhere": elsewhere,
            "assigned_to_me": [_short(t) for t in assigned[:ASSIGNED_SHOWN]],
            "ready": [_short(t) for t in ready[:READY_SHOWN]],
            "ready_total": ready_total,
            "counts": counts,
            "other_agents": others[:AGENTS_SHOWN],
            "the_human": the_human,
            "unread_messages": unread,
            "hint": hint,
        }
    )


#: The lists `fit` shortens, least useful first (the reverse of the board's ranking).
_CUT_ORDER = (
    "other_agents",
    "ready",
    "unread_messages",
    "assigned_to_me",
    "edited_elsewhere",
    "my_reservations",
    "my_claims",
)
_encoder = msgspec.json.Encoder()


def fit(board: dict[str, Any], limit: int = BOARD_CHARS) -> dict[str, Any]:
    """`board` with rows dropped from its least useful lists until its JSON is at most
    `limit` characters; `"cut"` then says how many went (the totals still count them)."""
    dropped = 0

    def size() -> int:  # with the `"cut"` that will say what went, once anything has
        return len(_encoder.encode(board)) + (len(f',"cut":{dropped}') if dropped else 0)

    while size() > limit:
        name = next((n for n in _CUT_ORDER if board[n]), None)
        if name is None:
            break  # only the scalars are left: short by construction
        board[name] = board[name][:-1]
        dropped += 1
    if dropped:
        board["cut"] = dropped
    return board


async def _edited_elsewhere(bridge: Bridge, agent: str, project: str) -> list[dict[str, Any]]:
    """Other live agents' edits, in other worktrees, of files this tab edited too
    (docs/PROTOCOL-1.2.md section 11, as `coord prime` shows them); none from a daemon
    without the feature."""
    try:
        found: RecentResult = await bridge.link.typed(
            methods_edits.recent_edits(project=project, agent=agent, limit=EDITS_SHOWN)
        )
    except MethodNotFound:
        return []
    return [
        {"path": _cut(e.path, TITLE_CHARS), "agent": _cut(e.agent, NAME_CHARS),
         "worktree": _cut(e.worktree, TITLE_CHARS), "at": e.at}
        for e in found.edits
    ]  # fmt: skip


async def _unread(bridge: Bridge, ctx: Context) -> list[str]:
    """The first unread messages, one line each (not marked read: `read_messages` does
    that); none from a daemon without messages (1.2 feature `messages`)."""
    call = bridge.fill(methods_messages.read_messages(limit=MESSAGES_SHOWN), ctx)
    try:
        found: wire_messages.InboxResult = await bridge.link.typed(call)
    except CoordError:
        return []
    lines = [_cut(render_messages.message_line(m), MESSAGE_CHARS) for m in found.messages]
    if found.more:
        lines.append("more unread: read_messages")
    return lines


def _hint(mine: list[wire.Task], ready: list[wire.Task], cut: bool) -> str:
    more = " (counts stop at 10,000 per state)" if cut else ""
    if mine:
        return (
            "You hold claims: finish them (complete_task with their fence) or release them;"
            " heartbeat on long work" + more
        )
    if ready:
        return "Call claim_next (or claim_task with an id) before working on anything" + more
    return "Nothing ready: post work, or wait_for_task with ready true" + more

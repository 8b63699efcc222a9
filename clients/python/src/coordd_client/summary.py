"""The board in a few lines for a context window: `coord prime`, and later the MCP
`board` tool and the SessionStart hook, all print exactly this.

Bounded whatever the board's size: each section shows at most a handful of
rows, titles are cut to one line, and what was left out is counted, so a
10,000-task board costs the reader the same few hundred words as a small one.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime

from coordd_client import presence, render
from coordd_client.client import Client
from coordd_client.paging import all_tasks
from coordd_client.protocol.wire import Event, Task

#: Rows per section.
MY_CLAIMS_SHOWN = 10
READY_SHOWN = 8
ACKS_SHOWN = 5
AGENTS_SHOWN = 8
#: Characters of a title shown.
TITLE_CHARS = 80
#: Recent events read to find the latest acks and who acted in the project lately.
ACK_LOOKBACK_EVENTS = 500


@dataclass(frozen=True)
class BoardSummary:
    text: str
    my_claims: list[Task]
    ready: list[Task]
    #: Pending tasks assigned to the agent (shown, so a wake-up need not repeat them).
    assigned: list[Task]


def _title(task: Task) -> str:
    title = render.clean(task.title)
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…"


#: How to act on the board, by who reads the summary: a shell's `coord` runs as the tab
#: in Claude Code and Codex (the tab registry), but as its terminal in Cursor, whose
#: window is an agent only to its MCP server and hooks.
SHELL_HINT = (
    "Claim with `coord next` or `coord claim ID`; finish with `coord done ID`;"
    " `coord wait` instead of polling."
)
TOOLS_HINT = (
    "Claim with the coord tools (claim_next, claim_task), finish with complete_task;"
    " in a terminal, `coord` is another agent unless you pass `--agent {agent}`."
)


def summarize(
    client: Client, agent: str, project: str, *, shell_is_the_agent: bool = True
) -> BoardSummary:
    now = datetime.now(UTC)
    mine = all_tasks(client, project=project, state="claimed", claimed_by=agent)
    claimed = all_tasks(client, project=project, state="claimed")
    pending = all_tasks(client, project=project, state="pending")
    # Ready: pending with every dependency done (1.1), and not handed to someone else.
    ready = sorted(
        (t for t in pending if t.ready and t.assignee in (None, agent)),
        key=lambda t: (-t.priority, t.id),
    )
    for_me = [t for t in pending if t.assignee == agent]
    lines = [f"coordd board: project {render.clean(project)}; you are {render.clean(agent)}"]

    lines.append(f"Your claims ({len(mine)}):" if mine else "Your claims: none")
    for task in mine[:MY_CLAIMS_SHOWN]:
        lease = "lease ends " + render.relative(task.lease_expires_at)
        lines.append(
            f"  #{task.id} [{task.kind}] {_title(task)} (fence {task.fence}, lease {lease})"
        )
    _more(lines, len(mine) - MY_CLAIMS_SHOWN, "coord ls --mine")

    if for_me:
        lines.append(f"Assigned to you ({len(for_me)}):")
        for task in for_me[:MY_CLAIMS_SHOWN]:
            why = "" if task.ready else " blocked by " + ",".join(f"#{i}" for i in task.blocked_by)
            lines.append(f"  #{task.id} p{task.priority} [{task.kind}] {_title(task)}{why}")
        _more(lines, len(for_me) - MY_CLAIMS_SHOWN, "coord ls --mine")

    lines.append(f"Ready to claim ({len(ready)}, most urgent first):" if ready else "Ready: none")
    for task in ready[:READY_SHOWN]:
        lines.append(f"  #{task.id} p{task.priority} [{task.kind}] {_title(task)}")
    _more(lines, len(ready) - READY_SHOWN, "coord ls")

    recent = _recent_events(client, project)
    acks = [e.task for e in recent if e.type == "task.posted" and e.task.kind == "ack"]
    acks = acks[::-1][:ACKS_SHOWN]
    if acks:
        lines.append("Recent acks:")
        lines += [f"  #{t.id} {_title(t)} (by {render.clean(t.created_by or '-')})" for t in acks]

    holding: dict[str, list[int]] = defaultdict(list)
    for task in claimed:
        if task.claimed_by and task.claimed_by != agent:
            holding[task.claimed_by].append(task.id)
    # This project's agents at work, not every name the daemon knows (presence.py).
    reserving = {r.agent for r in client.reservations(project=project).reservations}
    seen = presence.scoped(
        client.agents().agents,
        now,
        holders=set(holding) | reserving,
        involved=presence.involved([*claimed, *pending], recent),
    )
    others = sorted({a.agent for a in seen if a.agent != agent} | set(holding))
    if others:
        lines.append("Other agents:")
        for name in others[:AGENTS_SHOWN]:
            ids = holding.get(name, [])
            what = ", ".join(f"#{i}" for i in ids[:5]) + (" ..." if len(ids) > 5 else "")
            lines.append(
                f"  {render.clean(name)}: " + (f"holds {what}" if ids else "holds nothing")
            )
        _more(lines, len(others) - AGENTS_SHOWN, "coord agents")
    lines.append(SHELL_HINT if shell_is_the_agent else TOOLS_HINT.format(agent=agent))
    return BoardSummary("\n".join(lines), mine, ready, for_me)


def _more(lines: list[str], left_out: int, where: str) -> None:
    if left_out > 0:
        lines.append(f"  ... {left_out} more ({where})")


def _recent_events(client: Client, project: str) -> list[Event]:
    """`project`'s events among the log's last `ACK_LOOKBACK_EVENTS`, oldest first."""
    last = client.server_info().last_seq
    return client.events_since(
        after_seq=max(0, last - ACK_LOOKBACK_EVENTS),
        project=project,
        limit=ACK_LOOKBACK_EVENTS,
    ).events

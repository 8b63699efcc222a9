"""Which other agents a tab (or the human in `coord top`) is shown: the ones at work
in this project now, not every name the daemon ever saw.

`agent.list` is daemon-wide and keeps an agent's `last_seen` forever (PROTOCOL.md
section 6: `{"agent", "last_seen", "holding"}`, no project), so listing it whole
shows agents of other repositories and tabs closed days ago, and `coord prime`,
the SessionStart context and the MCP `board` paid for each in every tab's context.
The rule, the same on every surface:

- an agent that holds something in the project (a claim, a reservation) is
  shown however long ago it was seen: it is what a human releases with `x`;
- any other agent is shown when it was seen within `HORIZON` and has to do with
  the project: it posted, holds, is assigned or acted on one of its tasks
  lately (the caller says who did), or `project` is every project.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import datetime, timedelta

from coordd_client.text import parse_time
from coordd_wire.wire import LIVE_HORIZON, AgentInfo, Event, Task

#: Seen within this long counts as at work (the wire's rule, shared with the daemon).
HORIZON = LIVE_HORIZON


def involved(
    tasks: Iterable[Task], events: Iterable[Event] = (), charged: Iterable[str] = ()
) -> set[str]:
    """The agents a project's tasks and recent events name, and those its token ledger
    charged (issue 48: a tab whose claim was released still spent tokens here)."""
    names: set[str] = set(charged)
    for task in tasks:
        names.update(n for n in (task.created_by, task.claimed_by, task.assignee) if n)
    for event in events:
        names.update(n for n in (event.agent, event.of) if n)
    return names


def scoped(
    agents: Iterable[AgentInfo],
    now: datetime,
    *,
    holders: Collection[str],
    involved: Collection[str] | None,
    horizon: timedelta = HORIZON,
) -> list[AgentInfo]:
    """The agents to show, in `agents`' order (the daemon's: most recently seen first).

    Args:
        holders: agents holding a claim or a reservation in the project.
        involved: agents the project's tasks and events name; None for every project.
    """
    return [
        a
        for a in agents
        if a.agent in holders
        or (now - parse_time(a.last_seen) < horizon and (involved is None or a.agent in involved))
    ]

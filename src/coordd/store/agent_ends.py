"""An agent's reported end (docs/PROTOCOL-1.2.md section 2a, flag `agent_ended`).

The board cannot see a tab's host process, so an agent is as present as its
last call says, and a tab that exited looks like one that paused. A tab's
session-end hook reports its own end (`agent.end`), and a client that finds a
tab record whose host process is gone reports that tab's: `ended_at` is set
on its `agents` row, and `agent.list` shows it. The agent's own next call
clears it (`Txn.touch_agent`): a name that comes back is here again.

A hand-over to an ended agent is refused (`refuse_ended`): what it was given
would stay reserved for a tab that will never use or release it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from coordd.limits import Limits
from coordd.store.sql import Db
from coordd.store.transaction import Txn
from coordd_wire import params as P
from coordd_wire.errors import AgentEnded
from coordd_wire.wire import EndAgentResult


def end_agent(tx: Txn, p: P.EndAgentParams) -> EndAgentResult:
    """`agent.end`: record that `of` (default: the caller) ended, now.

    An agent the board never saw gets no row (the result says so). The ended
    agent's last-seen is left as it was: its end is not a sign of life. A caller
    reporting another's end is seen, as any caller is.
    """
    of = p.of if p.of is not None else p.agent
    ended = tx.conn.execute(
        "UPDATE agents SET ended_at = ? WHERE agent = ?", (tx.now_text, of)
    ).rowcount
    # Its next call writes its last-seen whatever the writer's cache says, and so
    # clears the end (a cached recent write would skip it).
    tx.seen[of] = tx.now - timedelta(seconds=Limits.agent_seen_resolution_s)
    if of != p.agent:
        tx.touch_agent(p.agent)
    return EndAgentResult(ended=ended > 0)


def ended_among(conn: Db, names: Sequence[str]) -> list[str]:
    """Those of `names` whose end was reported and who have not been seen since, sorted."""
    unique = list(dict.fromkeys(names))
    if not unique:
        return []
    marks = ", ".join("?" * len(unique))
    rows = conn.execute(
        f"SELECT agent FROM agents WHERE ended_at IS NOT NULL AND agent IN ({marks})", unique
    ).fetchall()
    return sorted(agent for (agent,) in rows)


def ended_at(conn: Db, agent: str) -> str | None:
    """When `agent`'s end was reported, if it has not been seen since."""
    row = conn.execute("SELECT ended_at FROM agents WHERE agent = ?", (agent,)).fetchone()
    return None if row is None else row[0]


def refuse_ended(conn: Db, agent: str, what: str) -> None:
    """-32002 `agent_ended` when `agent` has ended: `what` cannot go to it."""
    when = ended_at(conn, agent)
    if when is not None:
        raise AgentEnded(
            f"{agent} has ended (its tab exited at {when}): {what} cannot be handed to it;"
            " deny the request instead",
            agent=agent,
            ended_at=when,
        )

"""The builder of docs/PROTOCOL-1.2.md section 2a (flag `agent_ended`): an agent's end.

Written like `methods.py`'s; a tab's session-end hook and a client that finds a
tab record whose host process is gone call it.
"""

from __future__ import annotations

from coordd_wire import wire
from coordd_wire.method_table import Call, call


def end_agent(of: str | None = None, *, agent: str | None = None) -> Call[wire.EndAgentResult]:
    """Record that `of` (omitted: the caller, `agent`) has ended: its host process exited.
    `agent.list` shows it as ended, and a hand-over to it is refused, until it calls again."""
    return call("agent.end", {"agent": agent, "of": of})

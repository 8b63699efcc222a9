"""`agent.heartbeat`, `agent.list`, and 1.2 `agent.release` and `agent.end`."""

from __future__ import annotations

from coordd.clock import format_time
from coordd.methods.registry import Services, Session, method, write
from coordd.store import agent_ends, claims, holding, reads
from coordd_wire import params as P
from coordd_wire.wire import AgentsResult

write("agent.heartbeat", claims.heartbeat)


@method("agent.list")
async def list_agents(services: Services, p: P.NoParams, session: Session) -> AgentsResult:
    return await services.readers.run(
        reads.list_agents, format_time(services.clock.now()), share=session.reads
    )


write("agent.release", holding.release_agent)
write("agent.end", agent_ends.end_agent)

"""`agent.heartbeat` and `agent.list`."""

from __future__ import annotations

from typing import Any

from coordd.clock import format_time
from coordd.methods.registry import Services, Session, method
from coordd.protocol import params as P
from coordd.store import claims, reads


@method("agent.heartbeat", P.HeartbeatParams)
async def heartbeat(services: Services, p: P.HeartbeatParams, session: Session) -> Any:
    return await services.writer.submit(claims.heartbeat, p)


@method("agent.list", P.NoParams)
async def list_agents(services: Services, p: P.NoParams, session: Session) -> Any:
    return await services.readers.run(
        reads.list_agents, format_time(services.clock.now()), share=session.reads
    )

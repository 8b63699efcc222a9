"""The landing queue's tools (docs/PROTOCOL-1.2.md section 14): `landing_queue`, and
`land`, which runs the same lander as `coord land` (git in a worker thread, over its own
blocking client) with its wait for the queue bounded as a host's tool call is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import msgspec
import trio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult
from pydantic import Field

from coordd_apps.landing import git, lander
from coordd_apps.landing.plan import AlreadyLanding, LandingRefused, Plan
from coordd_apps.mcp_bridge import models as m
from coordd_apps.mcp_bridge import results
from coordd_apps.mcp_bridge.bridge import Bridge
from coordd_apps.mcp_bridge.traits import MAX_WAIT_S, READ_ONLY, WRITES
from coordd_client import methods_slots as methods
from coordd_client.client import Client
from coordd_wire import bounds
from coordd_wire import wire_slots as W
from coordd_wire.errors import Conflict, CoordError

Branch = Annotated[str, m.field(bounds.BRANCH)]
LandingList = m.from_wire(W.LandingList)
Finished = m.from_wire(W.Finished)


def register(server: MCPServer, bridge: Bridge) -> None:
    """Add the landing queue's tools to `server`."""

    @server.tool(annotations=READ_ONLY)
    async def landing_queue(
        ctx: Context, onto: Branch | None = None
    ) -> Annotated[CallToolResult, LandingList]:
        """The branches waiting to land (or landing) in this project, in order."""
        return await bridge.answer(methods.landings(onto=onto), ctx)

    @server.tool(annotations=WRITES)
    async def land(
        ctx: Context,
        *,
        branch: Branch,
        onto: Branch = "main",
        task_id: Annotated[int, Field(ge=1, description="complete it once landed")] | None = None,
    ) -> Annotated[CallToolResult, Finished]:
        """Land a branch through the queue: rebase onto the target, run the repository's
        check, fast-forward the target; refused with why (nothing merged then). A check
        longer than a tool call may take: run `coord land` in a shell instead."""
        agent, project = bridge.agent(ctx).value, bridge.project.value
        socket = bridge.link.socket_path
        plan = Plan(branch=branch, onto=onto, task_id=task_id, wait_s=MAX_WAIT_S)

        def run() -> Any:
            with Client(socket, agent=agent, project=project) as client:
                return lander.land(client, Path(project), plan, lambda line: None).landing

        try:
            landing = await trio.to_thread.run_sync(run)
        except LandingRefused as exc:
            return results.refusal(Conflict(str(exc), landing=exc.outcome.landing.id))
        except AlreadyLanding as exc:  # a retry of a call the host timed out
            return results.refusal(Conflict(str(exc), landing=exc.landing.id, pid=exc.pid))
        except git.GitFailed as exc:
            return results.refusal(Conflict(f"not landed: {exc}"))
        except CoordError as exc:
            return results.refusal(exc)
        return results.answer({"landing": msgspec.to_builtins(landing)})

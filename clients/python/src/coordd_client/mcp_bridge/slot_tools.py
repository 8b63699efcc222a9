"""The tools of issue 35: slots, ports and the landing queue (docs/PROTOCOL-1.2.md 13, 14).

Apart from `tools.py` (near its size limit) and registered by it. Each is a thin
adapter over one builder of `coordd_client.methods`, except `land`, which runs
the same lander as `coord land` (git in a worker thread, over its own blocking
client) with its wait for the queue bounded as a host's tool call is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import msgspec
import trio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from coordd_client import methods_slots as methods
from coordd_client import ports
from coordd_client.client import Client
from coordd_client.landing import git, lander
from coordd_client.landing.plan import AlreadyLanding, LandingRefused, Plan
from coordd_client.mcp_bridge import models as m
from coordd_client.mcp_bridge import results
from coordd_client.mcp_bridge.bridge import Bridge
from coordd_client.mcp_bridge.traits import MAX_WAIT_S, READ_ONLY, RETRY_SAFE, WRITES
from coordd_client.protocol import bounds
from coordd_client.protocol import wire_slots as W
from coordd_client.protocol.errors import Conflict, CoordError

SlotName = Annotated[str, m.field(bounds.SLOT_NAME, "e.g. migrations, test-db, gpu")]
Branch = Annotated[str, m.field(bounds.BRANCH)]
TaskBound = Annotated[int, m.field(bounds.TASK_ID, "end with this claim")]
SlotResult = m.from_wire(W.SlotResult)
Released = m.from_wire(W.Released)
LandingList = m.from_wire(W.LandingList)
Finished = m.from_wire(W.Finished)


def register(server: MCPServer, bridge: Bridge) -> None:
    """Add issue 35's tools to `server`."""

    @server.tool(annotations=WRITES)
    async def acquire_slot(
        ctx: Context,
        *,
        name: SlotName,
        capacity: Annotated[int, m.field(bounds.SLOT_CAPACITY, "1: a lock")] | None = None,
        ttl_s: m.TtlSeconds | None = None,
        task_id: TaskBound | None = None,
        wait_s: Annotated[float, m.field(bounds.WAIT_S, le=MAX_WAIT_S)] | None = None,
    ) -> Annotated[CallToolResult, SlotResult]:
        """Hold a named lock or semaphore of this project (a migration slot, a test database,
        a build) before using it; refused with who holds it. Release it when done."""
        call = methods.acquire_slot(
            name, capacity=capacity, ttl_s=ttl_s, task_id=task_id, wait_s=wait_s
        )
        return await bridge.answer(call, ctx)

    @server.tool(annotations=RETRY_SAFE)
    async def release_slot(
        ctx: Context,
        *,
        names: Annotated[list[SlotName], m.field(bounds.SLOT_NAMES)] | None = None,
        ids: Annotated[
            list[Annotated[int, m.field(bounds.SLOT_LEASE_ID)]], m.field(bounds.SLOT_LEASE_IDS)
        ]
        | None = None,
    ) -> Annotated[CallToolResult, Released]:
        """Give back your slot and port leases here: these names, these ids, or all."""
        return await bridge.answer(methods.release_slots(names, ids=ids), ctx)

    @server.tool(annotations=WRITES)
    async def lease_port(
        ctx: Context,
        *,
        name: SlotName | None = None,
        low: Annotated[int, m.field(bounds.PORT)] | None = None,
        high: Annotated[int, m.field(bounds.PORT)] | None = None,
        ttl_s: m.TtlSeconds | None = None,
        task_id: TaskBound | None = None,
    ) -> Annotated[CallToolResult, SlotResult]:
        """A port for a dev server or test service that no other agent's live lease holds
        and no other program on this machine listens on (default range 20000-29999);
        the same name again gives the same port."""
        agent, project = bridge.agent(ctx).value, bridge.project.value
        want = ports.PortRequest(name or "port", agent, project, low, high, ttl_s, task_id)
        socket = bridge.link.socket_path

        def run() -> ports.Leased:
            with Client(socket, agent=agent, project=project) as client:
                return ports.lease_free_port(client, want)

        try:
            leased = await trio.to_thread.run_sync(run)
        except CoordError as exc:
            return results.refusal(exc)
        answer = results.answer(msgspec.to_builtins(leased.result))
        if leased.skipped:
            answer.content.append(TextContent(type="text", text=leased.note()))
        return answer

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

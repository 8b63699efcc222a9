"""The tools of issue 35's slots and ports (docs/PROTOCOL-1.2.md section 13).

Apart from `tools.py` and registered by it; each is a thin adapter over one builder
of `coordd_client.methods_slots`. The landing queue's are `landing_tools.py`.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
import trio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent

from coordd_apps import ports
from coordd_apps.mcp_bridge import models as m
from coordd_apps.mcp_bridge import results
from coordd_apps.mcp_bridge.bridge import Bridge
from coordd_apps.mcp_bridge.traits import MAX_WAIT_S, RETRY_SAFE, WRITES
from coordd_client import methods_slots as methods
from coordd_client.client import Client
from coordd_wire import bounds
from coordd_wire import wire_slots as W
from coordd_wire.errors import CoordError

SlotName = Annotated[str, m.field(bounds.SLOT_NAME, "e.g. migrations, test-db, gpu")]
TaskBound = Annotated[int, m.field(bounds.TASK_ID, "end with this claim")]
SlotResult = m.from_wire(W.SlotResult)
Released = m.from_wire(W.Released)


def register(server: MCPServer, bridge: Bridge) -> None:
    """Add the slot and port tools to `server`."""

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

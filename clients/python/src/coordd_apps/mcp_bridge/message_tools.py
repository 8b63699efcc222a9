"""The MCP tools of 1.2 section 12 (issue 34): `send_message`, `read_messages`,
`request_release`, `answer_request`. Declared once, beside `tools.py` (near its size
limit), in its shape: each a thin adapter over one builder of
`coordd_client.methods_messages`, `agent` and `project` filled in by the server.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from coordd_apps.mcp_bridge import models as m
from coordd_apps.mcp_bridge import results
from coordd_apps.mcp_bridge.bridge import Bridge
from coordd_apps.mcp_bridge.traits import RETRY_SAFE, WRITES
from coordd_apps.wording import render_messages
from coordd_client import methods_messages
from coordd_client.methods import Call
from coordd_wire import bounds, wire_messages
from coordd_wire.errors import CoordError
from coordd_wire.wire_messages import InboxResult

Body = Annotated[str, m.field(bounds.MESSAGE_BODY, "the text; one paragraph is best")]
MessageId = Annotated[int, m.field(bounds.MESSAGE_ID)]

SendResult = m.from_wire(wire_messages.SendResult)
InboxModel = m.from_wire(wire_messages.InboxResult)
RequestResult = m.from_wire(wire_messages.RequestResult)
AnswerResult = m.from_wire(wire_messages.AnswerResult)


def register(server: MCPServer, bridge: Bridge) -> None:
    """Add the message tools to `server`."""

    @server.tool(annotations=WRITES)
    async def send_message(
        ctx: Context,
        *,
        body: Body,
        to: Annotated[str, m.field(bounds.AGENT, "one agent; omitted: everyone here")]
        | None = None,
        task_id: Annotated[int, m.field(bounds.TASK_ID, "on this task's thread")] | None = None,
        reply_to: Annotated[int, m.field(bounds.MESSAGE_ID, "a reply to this message")]
        | None = None,
        kind: Annotated[wire_messages.SendKind, Field(description="question: open until answered")]
        | None = None,
        idempotency_key: m.IdempotencyKey | None = None,
    ) -> Annotated[CallToolResult, SendResult]:
        """Message another agent (to), a task's thread (task_id), the sender of a message
        (reply_to), or every live agent here; kind="question" expects a reply."""
        call = methods_messages.send_message(
            body,
            to=to,
            task_id=task_id,
            reply_to=reply_to,
            kind=kind,
            idempotency_key=idempotency_key or bridge.fresh_idempotency_key(),
        )
        return await bridge.answer(call, ctx)

    @server.tool(annotations=RETRY_SAFE)
    async def read_messages(
        ctx: Context,
        *,
        after_id: MessageId | None = None,
        limit: Annotated[int, m.field(bounds.MESSAGE_LIMIT)] | None = None,
    ) -> Annotated[CallToolResult, InboxModel]:
        """Your unread messages, oldest first, then marked read (shown once). Release
        requests say how to answer them (answer_request)."""
        call = bridge.fill(methods_messages.read_messages(after_id=after_id, limit=limit), ctx)
        try:
            found: InboxResult = await bridge.link.typed(call)
            if found.messages:  # shown now: acknowledged, so no hook repeats them
                await bridge.link.typed(_mark_read(bridge, ctx, found))
        except CoordError as exc:
            return results.refusal(exc)
        answered = results.answer(msgspec.to_builtins(found))
        text = "\n".join(render_messages.message_line(msg) for msg in found.messages)
        answered.content.append(TextContent(type="text", text=text or "no unread messages"))
        return answered

    @server.tool(annotations=WRITES)
    async def request_release(
        ctx: Context,
        *,
        patterns: m.Patterns | None = None,
        task_id: Annotated[int, m.field(bounds.TASK_ID, "a claimed task you need")] | None = None,
        to: Annotated[str, m.field(bounds.AGENT, "which holder, if several")] | None = None,
        body: Body | None = None,
        ttl_s: Annotated[float, m.field(bounds.REQUEST_TTL_S, "expires after (900)")] | None = None,
        idempotency_key: m.IdempotencyKey | None = None,
    ) -> Annotated[CallToolResult, RequestResult]:
        """Ask whoever holds these reserved paths (patterns) or this claimed task (task_id)
        to hand it to you; the answer arrives as a message (read_messages)."""
        call = methods_messages.request_release(
            patterns=patterns,
            task_id=task_id,
            to=to,
            body=body,
            ttl_s=ttl_s,
            idempotency_key=idempotency_key or bridge.fresh_idempotency_key(),
        )
        return await bridge.answer(call, ctx)

    @server.tool(annotations=WRITES)
    async def answer_request(
        ctx: Context,
        *,
        id: MessageId,
        decision: wire_messages.Decision,
        patterns: m.Patterns | None = None,
        reason: m.Reason | None = None,
    ) -> Annotated[CallToolResult, AnswerResult]:
        """Answer a release request sent to you: approve hands it over now, deny keeps it
        (say why in reason), narrow hands over only `patterns`."""
        call = methods_messages.answer_request(id, decision, patterns=patterns, reason=reason)
        return await bridge.answer(call, ctx)


def _mark_read(bridge: Bridge, ctx: Context, found: InboxResult) -> Call[Any]:
    """The acknowledgement of what `read_messages` shows: the tab is not told twice."""
    return bridge.fill(methods_messages.ack_messages(found.messages[-1].id), ctx)

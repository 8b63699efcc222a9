"""What every tool shares: who it acts as, for which board, and how a call is answered."""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from typing import Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent

from coordd_client import methods
from coordd_client.identity import Resolved, host_project
from coordd_client.mcp_bridge import results
from coordd_client.mcp_bridge.link import DaemonLink
from coordd_client.mcp_bridge.naming import mcp_agent
from coordd_client.protocol.errors import CoordError


class Bridge:
    def __init__(
        self,
        link: DaemonLink,
        environ: Mapping[str, str] | None = None,
        *,
        host: str | None = None,
        project: str | None = None,
    ) -> None:
        self.link = link
        self._env = dict(os.environ if environ is None else environ)
        self._host = host
        self.project = Resolved(project, "--project") if project else host_project(self._env)

    def agent(self, ctx: Context | None) -> Resolved:
        """Resolved on every call: the tab registry may name this tab only after start."""
        return mcp_agent(self._env, _client_name(ctx), self._host)

    def fill(self, call: methods.Call[Any], ctx: Context | None) -> methods.Call[Any]:
        """The call with this server's agent and project where the method takes them."""
        return methods.with_defaults(call, self.agent(ctx).value, self.project.value)

    async def answer(self, call: methods.Call[Any], ctx: Context | None) -> CallToolResult:
        """Run one protocol call; its result object, or a tool error saying what to do."""
        try:
            result = await self.link.request(self.fill(call, ctx))
        except CoordError as exc:
            return results.refusal(exc)
        answered = results.answer(result)
        lost = results.lost_claim_text(result) if call.method == "task.claim" else None
        if lost is not None:
            answered.content.append(TextContent(type="text", text=lost))
        return answered

    def then_post(self, params: dict[str, Any] | None, ctx: Context | None) -> Any:
        """A nested post gets this server's agent and project too."""
        if params is None:
            return None
        return {"agent": self.agent(ctx).value, "project": self.project.value, **params}

    @staticmethod
    def fresh_idempotency_key() -> str:
        """A post made retry-safe: repeating it after a lost answer cannot post twice."""
        return f"mcp-{uuid.uuid4().hex}"


def _client_name(ctx: Context | None) -> str | None:
    if ctx is None:
        return None
    try:
        params = ctx.session.client_params
    except (AttributeError, RuntimeError, ValueError):
        return None
    info = getattr(params, "client_info", None)
    name = getattr(info, "name", None)
    return name if isinstance(name, str) and name else None

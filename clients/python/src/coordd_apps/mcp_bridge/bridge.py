"""What every tool shares: who it acts as, for which board, and how a call is answered.

One server object serves every tab (the shared server runs each relay's
connection as its own MCP session), so nothing of a tab's is kept on the
tools: each session sets its `TabSession` in a context variable before the
SDK runs it, and the tasks the SDK starts for its requests inherit it.
`Bridge` reads the calling tab's from there.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import msgspec
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent

from coordd_apps.mcp_bridge import results
from coordd_apps.mcp_bridge.link import DaemonLink
from coordd_apps.mcp_bridge.naming import mcp_agent
from coordd_client import acks, methods
from coordd_client.identity import Resolved
from coordd_wire import wire
from coordd_wire.errors import CoordError


@dataclass(frozen=True)
class TabSession:
    """One tab's MCP session: its daemon connection and what names it."""

    link: DaemonLink
    #: The tab's environment (the relay's, sent in its hello; or this process's).
    env: Mapping[str, str]
    host: str | None
    project: Resolved
    #: The tab's own `coord mcp` process (its relay), or None for this process.
    process: int | None


_CURRENT: ContextVar[TabSession] = ContextVar("coord_mcp_tab")


def enter(tab: TabSession) -> None:
    """Make `tab` the one the tools of this task (and the tasks it starts) act for."""
    _CURRENT.set(tab)


class Bridge:
    """The calling tab's link, project and agent, for the tools (declared once, for
    every session)."""

    @staticmethod
    def tab() -> TabSession:
        return _CURRENT.get()

    @property
    def link(self) -> DaemonLink:
        return self.tab().link

    @property
    def project(self) -> Resolved:
        return self.tab().project

    def agent(self, ctx: Context | None) -> Resolved:
        """Resolved on every call: the tab registry may name this tab only after start."""
        tab = self.tab()
        return mcp_agent(tab.env, _client_name(ctx), tab.host, tab.process)

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
        note = results.note(call, result)
        if note is not None:
            answered.content.append(TextContent(type="text", text=note))
        return answered

    async def then_post(
        self, task_id: int, params: dict[str, Any] | None, ctx: Context | None
    ) -> dict[str, Any] | None:
        """The follow-up post of completing `task_id`: the ack (kind ack, done, tagged
        `re:<id>`, in the task's project) that the CLI's `--ack` posts too, unless the
        caller names another kind (`acks.follow_up`); this server's agent posts it.
        Reads the task first, for its project and tags; a refusal raises `CoordError`."""
        if params is None:
            return None
        got = await self.link.request(methods.get(task_id))
        task = msgspec.convert(got["task"], wire.Task)
        posted = acks.follow_up(task, {"agent": self.agent(ctx).value, **params})
        posted.setdefault("project", self.project.value)  # a follow-up that is not an ack
        return posted

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

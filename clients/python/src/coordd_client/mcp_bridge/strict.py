"""Unknown tool arguments are an error, as unknown params are in the protocol.

The SDK validates the arguments a tool names and silently drops any others,
so a misspelt `fence` would pass unnoticed and a holder check would be
skipped. This middleware refuses such a call, naming the argument, before
the tool runs.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent


class RefuseUnknownArguments:
    def __init__(self, server: MCPServer) -> None:
        self._server = server
        self._known: dict[str, frozenset[str]] | None = None

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        params = ctx.params
        if ctx.method == "tools/call" and isinstance(params, dict):
            arguments = params.get("arguments") or {}
            known = (await self._arguments()).get(str(params.get("name")))
            if known is not None and isinstance(arguments, dict):
                unknown = sorted(set(arguments) - known)
                if unknown:
                    return _refuse(str(params.get("name")), unknown, known)
        return await call_next(ctx)

    async def _arguments(self) -> dict[str, frozenset[str]]:
        if self._known is None:
            self._known = {
                tool.name: frozenset(tool.input_schema.get("properties", {}))
                for tool in await self._server.list_tools()
            }
        return self._known


def _refuse(tool: str, unknown: list[str], known: frozenset[str]) -> CallToolResult:
    names = ", ".join(unknown)
    text = (
        f"invalid_params: {tool} has no argument {names}; its arguments are"
        f" {', '.join(sorted(known)) or 'none'}; fix the argument named and call again"
    )
    error = {
        "kind": "invalid_params",
        "code": -32602,
        "message": text,
        "data": {"kind": "invalid_params", "field": unknown[0]},
    }
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content={"error": error},
        is_error=True,
    )

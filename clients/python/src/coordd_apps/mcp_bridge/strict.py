"""Arguments are checked before a tool runs, and refused as the protocol refuses params.

The SDK validates the arguments a tool names and silently drops any others,
so a misspelt `fence` would pass unnoticed and a holder check would be
skipped; and its own validation errors are pydantic's text with a link,
unlike every other refusal the model reads. This middleware checks a call
against the tool's input schema first (unknown names, then types and
bounds) and refuses it with one line in the house form:
`invalid_params: title must not be empty; priority must be at most 1000;
fix the argument named and call again`.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult

from coordd_apps.mcp_bridge.results import invalid_params

_TYPE_WORDS = {
    "string": "a string",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "an object",
    "null": "null",
}


class CheckArguments:
    def __init__(self, server: MCPServer) -> None:
        self._server = server
        self._validators: dict[str, Draft202012Validator] | None = None

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        params = ctx.params
        if ctx.method == "tools/call" and isinstance(params, dict):
            refusal = await self._check(str(params.get("name")), params.get("arguments") or {})
            if refusal is not None:
                return refusal
        return await call_next(ctx)

    async def _check(self, tool: str, arguments: Any) -> CallToolResult | None:
        validator = (await self._schemas()).get(tool)
        if validator is None or not isinstance(arguments, dict):
            return None  # an unknown tool: the SDK answers that itself
        known = frozenset(validator.schema.get("properties", {}))
        unknown = sorted(set(arguments) - known)
        if unknown:
            names = ", ".join(unknown)
            return invalid_params(
                f"{tool} has no argument {names}; its arguments are"
                f" {', '.join(sorted(known)) or 'none'}",
                unknown[0],
            )
        errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
        if not errors:
            return None
        problems = [describe(error) for error in errors]
        return invalid_params("; ".join(dict.fromkeys(p[1] for p in problems)), problems[0][0])

    async def _schemas(self) -> dict[str, Draft202012Validator]:
        if self._validators is None:
            self._validators = {
                tool.name: Draft202012Validator(tool.input_schema)
                for tool in await self._server.list_tools()
            }
        return self._validators


def describe(error: ValidationError) -> tuple[str, str]:
    """(the field, what is wrong with it) in words, for one schema violation."""
    if error.validator in ("anyOf", "oneOf") and error.context:
        # `int | None` and friends: say what the closest alternative wanted.
        # The value was not null, so the `null` branch of an optional one says nothing.
        wanted = [
            e for e in error.context if not (e.validator == "type" and e.validator_value == "null")
        ]
        inner = best_match(wanted or error.context)
        if inner is not None:
            inner_path = [*error.path, *inner.path]
            return _words(inner, ".".join(str(p) for p in inner_path) or "arguments")
    field = ".".join(str(p) for p in error.path) or "arguments"
    return _words(error, field)


def _words(error: ValidationError, field: str) -> tuple[str, str]:
    kind, limit = str(error.validator), error.validator_value
    if kind == "required":
        missing = str(error.message).split("'")[1] if "'" in error.message else field
        return missing, f"{missing} is required"
    return field, f"{field} {_rule(kind, limit) or ': ' + error.message}"


def _rule(kind: str, limit: Any) -> str | None:
    """What a JSON Schema keyword asks, in words (None for one not worded here)."""
    if kind == "minLength":
        return "must not be empty" if limit == 1 else f"must be at least {limit} characters"
    simple = {
        "maxLength": "must be at most {} characters",
        "minimum": "must be at least {}",
        "maximum": "must be at most {}",
        "exclusiveMinimum": "must be more than {}",
        "exclusiveMaximum": "must be less than {}",
        "minItems": "must have at least {} item(s)",
        "maxItems": "must have at most {} items",
        "const": "must be {}",
        "pattern": "must match {}",
    }
    if kind in simple:
        return simple[kind].format(limit)
    if kind == "enum" and isinstance(limit, list):
        return "must be one of " + ", ".join(map(str, limit))
    if kind == "type":
        return f"must be {_type_words(limit)}"
    return None


def _type_words(expected: Any) -> str:
    names = expected if isinstance(expected, list) else [expected]
    return " or ".join(_TYPE_WORDS.get(str(name), str(name)) for name in names)

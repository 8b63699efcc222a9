"""The MCP tools publish the daemon's bounds: every tool argument's JSON Schema (ranges,
lengths, patterns, list caps, enums) equals the schema of the wire param it is sent as
(issue 30, item 3).

Both sides are built from `coordd_wire.bounds`; this compares what each
actually publishes (the real MCP server's tool list, msgspec's schema of the daemon's
params Struct), so a bound typed by hand on either side, or an argument on one side
only, fails here naming the tool, the argument and both values.
"""

from __future__ import annotations

import ast
from typing import Any

import msgspec
import pytest
import trio

from coordd.methods.registry import METHODS
from coordd_apps.mcp_bridge.server import build_server
from parity import ROOT, builder_methods

pytest.importorskip("mcp")

TOOLS_PY = ROOT / "clients" / "python" / "src" / "coordd_apps" / "mcp_bridge" / "tools.py"
#: Issue 34's tools, registered by tools.py from their own module.
TALK_TOOLS_PY = TOOLS_PY.with_name("message_tools.py")
#: What JSON Schema says about a value's range, size, shape or set; titles, descriptions
#: and defaults are presentation.
CONSTRAINTS = (
    "type",
    "enum",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
)
#: The server fills these in itself (bridge.fill; `repeat`: claim_retry, when a claim is
#: asked again, or given a key): no tool takes them.
SERVER_FILLED = {"agent", "project", "repeat"}
#: Tool arguments that are not wire params: (tool, argument) -> why.
TOOL_ONLY = {("list_reservations", "mine"): "turned into `agent` by the tool"}
#: Wire params a tool leaves out on purpose: (tool, param) -> why.
WIRE_ONLY = {
    ("release_paths", "of"): "freeing another agent's reservations is the person's, with"
    " a confirmation (`coord unreserve --of`, `coord web`), not a tool's",
}
#: Limits a tool narrows, never widens: a host times a tool call out long before the
#: protocol's longest wait (traits.MAX_WAIT_S).
NARROWED = {("wait_for_task", "timeout_s"), ("reserve_paths", "wait_s"), ("acquire_slot", "wait_s")}


def tool_methods() -> dict[str, str]:
    """{tool: wire method} from the builders each tool in tools.py calls."""
    builders = {builder: wire for wire, builder in builder_methods().items()}
    found: dict[str, str] = {}
    tool_modules = (
        TOOLS_PY,
        TALK_TOOLS_PY,
        TOOLS_PY.with_name("slot_tools.py"),
        TOOLS_PY.with_name("landing_tools.py"),
        TOOLS_PY.with_name("usage_tools.py"),
    )
    for node in (n for path in tool_modules for n in ast.walk(ast.parse(path.read_text()))):
        if not isinstance(node, ast.AsyncFunctionDef) or node.name.startswith("_"):
            continue  # a private helper is no tool (whoami's `_board_reached`)
        called = {
            inner.func.attr
            for inner in ast.walk(node)
            if isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Attribute)
            and isinstance(inner.func.value, ast.Name)
            and inner.func.value.id
            in ("methods", "methods_messages", "methods_slots", "methods_usage")
        }
        wires = {builders[name] for name in called if name in builders}
        if wires:
            assert len(wires) == 1, f"tool {node.name} calls {sorted(wires)}"
            found[node.name] = wires.pop()
    return found


async def tool_schemas() -> dict[str, dict[str, Any]]:
    """The input schema of every tool, as the real server lists them to a host."""
    # Listing tools needs no tab and no daemon: one server object serves every tab.
    server = build_server("0")
    return {tool.name: tool.input_schema for tool in await server.list_tools()}


def wire_schema(method: str) -> dict[str, Any]:
    """msgspec's JSON Schema of the daemon's params Struct for `method`."""
    schema: dict[str, Any] = msgspec.json.schema(METHODS[method].decoder.type)
    return schema


def normal(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """`node`'s constraints only, `$ref`s resolved, `null` branches dropped (an omitted
    optional equals null on both sides) and patterns in one dialect."""
    while "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[-1]]
    if "anyOf" in node:
        branches = [b for b in node["anyOf"] if b.get("type") != "null"]
        if len(branches) == 1:
            return normal(branches[0], defs)
        return {"anyOf": [normal(b, defs) for b in branches]}
    out = {key: node[key] for key in CONSTRAINTS if key in node}
    if "enum" in out:  # msgspec sorts a Literal's members and leaves out their type
        out["enum"] = sorted(out["enum"])
        out.pop("type", None)
    if "pattern" in out:  # msgspec's `\A...\Z` is JSON Schema's `^...$`
        pattern = str(out["pattern"])
        if pattern.startswith(r"\A") and pattern.endswith(r"\Z"):
            out["pattern"] = f"^{pattern[2:-2]}$"
    if "items" in node:
        out["items"] = normal(node["items"], defs)
    if "properties" in node:
        out["properties"] = {k: normal(v, defs) for k, v in node["properties"].items()}
    return out


def differences(tool: Any, wire: Any, where: str, narrowed: bool) -> list[str]:
    """Where the tool's normalised schema differs from the wire's; a nested object (the
    follow-up post) may leave out what the server fills in."""
    if isinstance(tool, dict) and isinstance(wire, dict):
        if "properties" in tool and "properties" in wire:
            wire = {**wire, "properties": dict(wire["properties"])}
            for name in SERVER_FILLED - set(tool["properties"]):
                wire["properties"].pop(name, None)
        found: list[str] = []
        for key in sorted(set(tool) | set(wire)):
            if narrowed and key == "maximum" and key in tool and key in wire:
                if tool[key] > wire[key]:
                    found.append(f"{where}.maximum: {tool[key]} widens the wire's {wire[key]}")
                continue
            if key not in tool or key not in wire:
                side = "the tool" if key not in tool else "the wire"
                found.append(f"{where}.{key}: missing on {side} ({tool.get(key, wire.get(key))})")
                continue
            found += differences(tool[key], wire[key], f"{where}.{key}", narrowed)
        return found
    if isinstance(tool, list) and isinstance(wire, list) and len(tool) == len(wire):
        return [
            d
            for i, (t, w) in enumerate(zip(tool, wire, strict=True))
            for d in differences(t, w, f"{where}[{i}]", narrowed)
        ]
    return [] if tool == wire else [f"{where}: tool {tool!r} != wire {wire!r}"]


def test_every_tool_that_calls_the_daemon_is_mapped_to_its_method() -> None:
    mapped = tool_methods()
    assert mapped["post_task"] == "task.post"
    assert mapped["release_paths"] == "reservation.release"
    assert len(mapped) >= 18  # every tool but `board` (several calls) and `whoami`


async def test_every_tool_argument_has_the_wire_params_bounds() -> None:
    with trio.fail_after(60):
        schemas = await tool_schemas()
    problems: list[str] = []
    for tool, method in sorted(tool_methods().items()):
        given = schemas[tool]
        wire = wire_schema(method)
        defs = {**wire.get("$defs", {}), **given.get("$defs", {})}
        wire_props = normal(wire, defs)["properties"]
        tool_props = normal(given, defs)["properties"]
        for name in sorted(set(tool_props) | set(wire_props)):
            if (tool, name) in TOOL_ONLY or (tool, name) in WIRE_ONLY:
                continue
            if name in SERVER_FILLED and name not in tool_props:
                continue
            if name not in wire_props:
                problems.append(f"{tool}.{name}: no such param of {method}")
            elif name not in tool_props:
                problems.append(f"{tool}: lacks {method}'s param {name}")
            else:
                narrowed = (tool, name) in NARROWED
                problems += differences(
                    tool_props[name], wire_props[name], f"{tool}.{name}", narrowed
                )
    assert not problems, "\n".join(problems)

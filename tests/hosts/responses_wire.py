"""The OpenAI Responses wire as the fake speaks it: script steps, output items, SSE frames.

Pure functions from a script step and a request to what the real API would
stream back (fake_openai.py serves them); nothing here holds state or a socket.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from hosts.codex_home import DEFAULT_MODEL

#: A script step: ``{"shell": cmd}``, ``{"apply_patch": patch}``,
#: ``{"mcp": server, "tool": name, "arguments": {...}}`` or ``{"text": final}``; any of
#: them may carry ``"usage"`` (a :func:`usage`), what its response says it used.
Step = Mapping[str, Any]

#: Item types in a request's ``input`` that carry a tool call's result back to the model.
OUTPUT_TYPES: Final = frozenset(
    {"function_call_output", "custom_tool_call_output", "mcp_tool_call_output"}
)


def request_text(body: Any) -> str:
    """Return every string in a request body, newline-joined.

    Why: a test asks "did MARKER reach the model?" and does not care whether Codex put it
    in ``instructions``, a developer message or a tool output; flattening avoids coupling
    the test to Codex's prompt layout, which changes between releases.
    """
    parts: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, str):
            parts.append(node)
        elif isinstance(node, Mapping):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(body)
    return "\n".join(parts)


def output_text(item: Mapping[str, Any]) -> str:
    """Return a tool output item's text, whatever shape Codex gave it.

    Why: Codex sends a plain string for shell and patch results but a list of content
    parts (``input_text``) for MCP results.
    """
    output = item.get("output")
    if isinstance(output, str):
        return output
    return request_text(output)


def sse(event: Mapping[str, Any]) -> bytes:
    """Frame one Responses stream event the way the real API does (``event:`` + ``data:``)."""
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def offered_name(tool: Any) -> str:
    """A tool's name as a request offers it (a namespace or a custom tool may have no name)."""
    if not isinstance(tool, Mapping):
        return "?"
    return str(tool.get("name") or tool.get("type") or "?")


def find_output(body: Mapping[str, Any], call_id: str) -> str | None:
    items = body.get("input")
    for item in items if isinstance(items, list) else ():
        if (
            isinstance(item, Mapping)
            and item.get("type") in OUTPUT_TYPES
            and item.get("call_id") == call_id
        ):
            return output_text(item)
    return None


def message(item_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "id": item_id,
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def tool_call(step: Step, call_id: str, tools: list[Any]) -> dict[str, Any]:
    """Build the output item for a tool step, shaped for the tools this request offers.

    Why look at ``tools``: Codex offers different shell and patch tools by model and
    feature flags (``shell``, ``shell_command``, ``exec_command``; ``apply_patch`` as a
    freeform custom tool or a JSON function), and a call must match the offered schema.
    """
    by_name = {offered_name(tool): tool for tool in tools}
    if "shell" in step:
        command = str(step["shell"])
        if "exec_command" in by_name:
            return function_call(call_id, "exec_command", {"cmd": command})
        if "shell_command" in by_name:
            return function_call(call_id, "shell_command", {"command": command})
        return function_call(call_id, "shell", {"command": ["bash", "-lc", command]})
    if "apply_patch" in step:
        patch = str(step["apply_patch"])
        tool = by_name.get("apply_patch")
        if isinstance(tool, Mapping) and tool.get("type") == "custom":
            return {
                "type": "custom_tool_call",
                "id": f"ctc_{call_id}",
                "status": "completed",
                "call_id": call_id,
                "name": "apply_patch",
                "input": patch,
            }
        return function_call(call_id, "apply_patch", {"input": patch})
    if "mcp" in step:
        server, tool_name = str(step["mcp"]), str(step["tool"])
        arguments = dict(step.get("arguments") or {})
        namespace = by_name.get(f"mcp__{server}")
        if isinstance(namespace, Mapping) and namespace.get("type") == "namespace":
            call = function_call(call_id, tool_name, arguments)
            call["namespace"] = f"mcp__{server}"
            return call
        return function_call(call_id, f"mcp__{server}__{tool_name}", arguments)
    raise ValueError(f"unknown script step: {step!r}")


def function_call(call_id: str, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "status": "completed",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
    }


#: What ``response.completed`` says a response used (the Responses API's ``usage``).
Usage = dict[str, Any]


def usage(
    input_tokens: int, output_tokens: int, cached_tokens: int = 0, reasoning_tokens: int = 0
) -> Usage:
    """A ``usage`` object as the API sends it: ``input_tokens`` include the cached ones and
    ``output_tokens`` the reasoning ones (each a detail of its total)."""
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached_tokens},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
        "total_tokens": input_tokens + output_tokens,
    }


def default_usage(n: int) -> Usage:
    """The n-th main-loop response's usage (1-based): distinct per response and per kind."""
    return usage(2000 * n + 7, 20 * n + 5, cached_tokens=1000 * n, reasoning_tokens=5 * n)


NO_USAGE: Final = usage(0, 0)


def stream(
    response_id: str, model: Any, item: dict[str, Any], used: Usage | None = None
) -> list[dict[str, Any]]:
    """The event sequence of one streamed response holding one output item."""
    response: dict[str, Any] = {
        "id": response_id,
        "object": "response",
        "status": "in_progress",
        "model": model or DEFAULT_MODEL,
        "output": [],
    }
    done = dict(response, status="completed", output=[item])
    done["usage"] = used if used is not None else usage(10, 5)
    events: list[dict[str, Any]] = [
        {"type": "response.created", "sequence_number": 0, "response": response},
        {
            "type": "response.output_item.added",
            "sequence_number": 1,
            "output_index": 0,
            "item": item,
        },
    ]
    if item["type"] == "message":
        text = item["content"][0]["text"]
        events.append(
            {
                "type": "response.output_text.delta",
                "sequence_number": 2,
                "item_id": item["id"],
                "output_index": 0,
                "content_index": 0,
                "delta": text,
            }
        )
    events += [
        {
            "type": "response.output_item.done",
            "sequence_number": len(events),
            "output_index": 0,
            "item": item,
        },
        {"type": "response.completed", "sequence_number": len(events) + 1, "response": done},
    ]
    return events

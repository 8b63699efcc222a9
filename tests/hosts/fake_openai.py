"""A scripted, local stand-in for the OpenAI Responses API, for driving the real Codex CLI.

Why: the host tier runs the actual ``codex`` binary so that its hooks, tools and MCP client
do what they really do, and no unit test can show that. Codex needs a model, and an account
would make the suite slow, costly and non-deterministic. Codex accepts any provider that
speaks the Responses wire protocol, so this module serves that protocol on 127.0.0.1 and
answers from a script: each step is the next tool call the "model" makes (a shell command,
an ``apply_patch``, an MCP tool call) or its final text. Every request body is recorded, so
a test can assert on what Codex sent the model: hook context, tool outputs, denials.

Standard library only: the host tier must not need more than the test runner itself.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Mapping, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Final

__all__ = [
    "DEFAULT_MODEL",
    "PROVIDER_ID",
    "FakeResponsesAPI",
    "Step",
    "codex_config",
    "model_catalog",
    "request_text",
    "write_codex_home",
]

log = logging.getLogger(__name__)

#: A script step: ``{"shell": cmd}``, ``{"apply_patch": patch}``,
#: ``{"mcp": server, "tool": name, "arguments": {...}}`` or ``{"text": final}``.
Step = Mapping[str, Any]

#: The provider id the config registers; the fake is reached only through it.
PROVIDER_ID: Final = "fake"

#: The model name the fake serves, described to Codex by :func:`model_catalog`. Why not a real
#: name: ``gpt-5.5`` puts MCP tools behind ``tool_search`` (a direct call answers
#: "unsupported call"), and a name with no metadata gets no ``apply_patch`` tool at all.
DEFAULT_MODEL: Final = "fake-model"

#: Substrings of a tool output that mean Codex did not route the call (an MCP server still
#: starting): the fake then repeats the same step with a fresh call id.
_RETRY_MARKERS: Final = ("unsupported call",)
#: How long a step is retried, and the pause before each retry. Why a pause: Codex answers
#: an unrouted call at once, so without one twenty retries pass in a second, well before a
#: Python MCP server (about 2 s to import the SDK) has listed its tools.
_RETRY_FOR_S: Final = 30.0
_RETRY_PAUSE_S: Final = 0.25

#: Item types in a request's ``input`` that carry a tool call's result back to the model.
_OUTPUT_TYPES: Final = frozenset(
    {"function_call_output", "custom_tool_call_output", "mcp_tool_call_output"}
)


def model_catalog(model: str = DEFAULT_MODEL) -> str:
    """Return a ``model_catalog_json`` file's text that describes ``model`` to Codex.

    Why: Codex takes a model's tool set from its catalogue entry. This entry asks for the
    freeform ``apply_patch`` tool and the ``shell_command`` tool (as ``gpt-5.5`` has) but
    turns ``supports_search_tool`` off, so MCP tools are offered directly (as the namespace
    ``mcp__<server>``) instead of behind ``tool_search``. The fields are the ones Codex
    0.171.0 refuses to load without; the short ``base_instructions`` keep requests small.
    """
    entry = {
        "slug": model,
        "display_name": "Scripted fake model",
        "base_instructions": "You are a scripted test model.",
        "apply_patch_tool_type": "freeform",
        "shell_type": "shell_command",
        "supports_search_tool": False,
        "prefer_websockets": False,
        "supported_reasoning_levels": [],
        "visibility": "list",
        "supported_in_api": True,
        "priority": 0,
        "support_verbosity": False,
        "truncation_policy": {"mode": "tokens", "limit": 10000},
        "experimental_supported_tools": [],
        "context_window": 272000,
    }
    return json.dumps({"models": [entry]}, indent=2)


def codex_config(
    base_url: str,
    *,
    model: str = DEFAULT_MODEL,
    catalog_path: str | os.PathLike[str] | None = None,
    extra: str = "",
) -> str:
    """Return config.toml text that points Codex at the fake and keeps it off the network.

    Why each part: ``model_provider`` routes every model request to ``base_url``, and
    ``catalog_path`` (a file holding :func:`model_catalog`) gives the model its tools. The
    rest turns off what would otherwise phone home from a test: the update check
    (``check_for_update_on_startup``), analytics, feedback upload, OpenTelemetry export,
    the remote model catalogue (``remote_models``), ChatGPT apps and plugins, web search;
    or would make a run depend on a real service: request compression the fake cannot
    decode, WebSocket transport, retries that hide a broken stream, memories. ``hooks``
    turns lifecycle hooks on. ``extra`` is appended verbatim (MCP servers, project trust,
    hook trust state); it may hold tables only, since it comes after them.
    """
    catalog = f'model_catalog_json = "{os.fspath(catalog_path)}"\n' if catalog_path else ""
    return f"""\
model = "{model}"
model_provider = "{PROVIDER_ID}"
{catalog}approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
web_search = "disabled"

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
trace_exporter = "none"
metrics_exporter = "none"
log_user_prompt = false

[history]
persistence = "none"

[features]
hooks = true
remote_models = false
apps = false
plugins = false
remote_plugin = false
tool_suggest = false
enable_request_compression = false
responses_websockets = false
responses_websockets_v2 = false
image_generation = false
memories = false
shell_snapshot = false

[model_providers.{PROVIDER_ID}]
name = "Fake Responses API"
base_url = "{base_url}"
wire_api = "responses"
requires_openai_auth = false
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 60000
{extra}"""


def write_codex_home(codex_home: Path, base_url: str, *, extra: str = "") -> Path:
    """Write ``config.toml`` and the model catalogue into ``codex_home``; return the config.

    Why a helper: the catalogue must be a file and the config must name it by absolute path,
    so every test would otherwise repeat the same two writes.
    """
    codex_home.mkdir(parents=True, exist_ok=True)
    catalog = codex_home / "fake-model-catalog.json"
    catalog.write_text(model_catalog(), encoding="utf-8")
    config = codex_home / "config.toml"
    config.write_text(
        codex_config(base_url, catalog_path=catalog.resolve(), extra=extra), encoding="utf-8"
    )
    return config


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


def _output_text(item: Mapping[str, Any]) -> str:
    """Return a tool output item's text, whatever shape Codex gave it.

    Why: Codex sends a plain string for shell and patch results but a list of content
    parts (``input_text``) for MCP results.
    """
    output = item.get("output")
    if isinstance(output, str):
        return output
    return request_text(output)


def _sse(event: Mapping[str, Any]) -> bytes:
    """Frame one Responses stream event the way the real API does (``event:`` + ``data:``)."""
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


class _Server(ThreadingHTTPServer):
    """The HTTP server, carrying a back-reference to the fake for its handlers."""

    daemon_threads = True
    fake: FakeResponsesAPI


class _Handler(BaseHTTPRequestHandler):
    """Routes requests to the fake; kept thin so all state lives in one locked object."""

    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Send access logs to :mod:`logging` instead of stderr (pytest shows them on failure)."""
        log.debug("fake_openai: " + format, *args)

    def do_GET(self) -> None:
        """Answer the start-up probes (model list and the like) with harmless JSON."""
        self.server.fake._note_path("GET", self.path)
        path = self.path.split("?", 1)[0]
        if path.endswith("/models"):
            self._json({"object": "list", "data": [], "models": []})
        else:
            self._json({})

    def do_POST(self) -> None:
        """Record the body; stream a scripted answer for ``/responses``, ``{}`` otherwise."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        fake = self.server.fake
        path = self.path.split("?", 1)[0]
        if not path.endswith("/responses"):
            fake._note_path("POST", self.path)
            self._json({})
            return
        events = fake._answer(body if isinstance(body, dict) else {})
        payload = b"".join(_sse(event) for event in events)
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _json(self, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class FakeResponsesAPI:
    """A scripted Responses API on 127.0.0.1, served from a background thread.

    Use as a context manager. Each *main-loop* request (one whose body carries ``tools``)
    consumes the next step; a request without tools (a title, a summary, a compaction) is
    answered with plain text and consumes nothing. Once the script is exhausted every
    main-loop request gets ``final_text``, which ends Codex's turn.

    Step *i* (0-based) is emitted with ``call_id`` ``call_<i>`` (``call_<i>_r<n>`` for its
    n-th retry), which is how :meth:`tool_output` finds what Codex sent back for it.
    """

    def __init__(self, steps: Sequence[Step] = (), *, final_text: str = "done") -> None:
        self._steps: list[Step] = [dict(step) for step in steps]
        self._final_text = final_text
        self._lock = threading.Lock()
        self._requests: list[Any] = []
        self._paths: list[str] = []
        self._next_step = 0
        # The MCP step last handed out: (step index, call id, attempt, first sent at).
        self._pending: tuple[int, str, int, float] | None = None
        self._seq = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------

    def __enter__(self) -> FakeResponsesAPI:
        """Bind a free port on 127.0.0.1 and serve until the block ends."""
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop serving and release the port."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def base_url(self) -> str:
        """The provider ``base_url`` for Codex's config, ending in ``/v1``."""
        if self._server is None:
            raise RuntimeError("FakeResponsesAPI is not running; use it as a context manager")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    # -- what was received -----------------------------------------------------------

    @property
    def requests(self) -> list[Any]:
        """Every ``/responses`` request body received so far, parsed, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def other_paths(self) -> list[str]:
        """``METHOD path`` of every request that was not a ``POST .../responses``."""
        with self._lock:
            return list(self._paths)

    @property
    def steps_used(self) -> int:
        """How many script steps have been handed out (retries not counted)."""
        with self._lock:
            return self._next_step

    def text(self) -> str:
        """All strings of all recorded requests: instructions, messages, tool outputs."""
        return "\n".join(request_text(body) for body in self.requests)

    def tool_outputs(self) -> dict[str, str]:
        """Map each ``call_id`` Codex answered to the output text it sent back."""
        found: dict[str, str] = {}
        for body in self.requests:
            items = body.get("input") if isinstance(body, Mapping) else None
            for item in items if isinstance(items, list) else ():
                if isinstance(item, Mapping) and item.get("type") in _OUTPUT_TYPES:
                    found[str(item.get("call_id"))] = _output_text(item)
        return found

    def tool_output(self, step: int) -> str:
        """Return what Codex sent the model as the result of script step ``step`` (0-based).

        For a retried step, the output of the last attempt. Raises :class:`KeyError` if
        Codex never answered that step (it did not run, or the run ended first).
        """
        outputs = self.tool_outputs()
        base = f"call_{step}"
        attempts = [cid for cid in outputs if cid == base or cid.startswith(base + "_r")]
        if not attempts:
            raise KeyError(f"no tool output for step {step}; call ids seen: {sorted(outputs)}")
        return outputs[max(attempts, key=lambda cid: (len(cid), cid))]

    def tool_names(self, request: int = -1) -> list[str]:
        """The tool names offered in a recorded main-loop request (default: the last)."""
        main = [b for b in self.requests if isinstance(b, Mapping) and b.get("tools")]
        return [_tool_name(tool) for tool in main[request]["tools"]] if main else []

    # -- answering -------------------------------------------------------------------

    def _note_path(self, method: str, path: str) -> None:
        log.info("fake_openai: unhandled %s %s", method, path)
        with self._lock:
            self._paths.append(f"{method} {path}")

    def _answer(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """Record ``body`` and build the event stream that answers it."""
        with self._lock:
            self._requests.append(body)
            self._seq += 1
            response_id = f"resp_{self._seq}"
            tools = body.get("tools")
            retry = False
            if not tools:
                item = _message(f"msg_{self._seq}", self._final_text)
            else:
                item, retry = self._next_item(body, tools)
        if retry:
            time.sleep(_RETRY_PAUSE_S)  # outside the lock: other requests go on meanwhile
        return _stream(response_id, body.get("model"), item)

    def _next_item(self, body: Mapping[str, Any], tools: list[Any]) -> tuple[dict[str, Any], bool]:
        """Choose the output item for a main-loop request (and whether it is a retry).

        Call with the lock held.
        """
        if self._pending is not None:
            index, call_id, attempt, since = self._pending
            self._pending = None
            output = _find_output(body, call_id)
            if (
                output is not None
                and time.monotonic() - since < _RETRY_FOR_S
                and any(m in output.lower() for m in _RETRY_MARKERS)
            ):
                return self._emit(index, attempt + 1, tools, since), True
        if self._next_step >= len(self._steps):
            return _message(f"msg_{self._seq}", self._final_text), False
        index = self._next_step
        self._next_step += 1
        return self._emit(index, 0, tools, time.monotonic()), False

    def _emit(self, index: int, attempt: int, tools: list[Any], since: float) -> dict[str, Any]:
        step = self._steps[index]
        call_id = f"call_{index}" if attempt == 0 else f"call_{index}_r{attempt}"
        if "text" in step:
            return _message(f"msg_{self._seq}", str(step["text"]))
        item = _tool_call(step, call_id, tools)
        if "mcp" in step:
            self._pending = (index, call_id, attempt, since)
        return item


def _tool_name(tool: Any) -> str:
    if not isinstance(tool, Mapping):
        return "?"
    return str(tool.get("name") or tool.get("type") or "?")


def _find_output(body: Mapping[str, Any], call_id: str) -> str | None:
    items = body.get("input")
    for item in items if isinstance(items, list) else ():
        if (
            isinstance(item, Mapping)
            and item.get("type") in _OUTPUT_TYPES
            and item.get("call_id") == call_id
        ):
            return _output_text(item)
    return None


def _message(item_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "id": item_id,
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _tool_call(step: Step, call_id: str, tools: list[Any]) -> dict[str, Any]:
    """Build the output item for a tool step, shaped for the tools this request offers.

    Why look at ``tools``: Codex offers different shell and patch tools by model and
    feature flags (``shell``, ``shell_command``, ``exec_command``; ``apply_patch`` as a
    freeform custom tool or a JSON function), and a call must match the offered schema.
    """
    by_name = {_tool_name(tool): tool for tool in tools}
    if "shell" in step:
        command = str(step["shell"])
        if "exec_command" in by_name:
            return _function_call(call_id, "exec_command", {"cmd": command})
        if "shell_command" in by_name:
            return _function_call(call_id, "shell_command", {"command": command})
        return _function_call(call_id, "shell", {"command": ["bash", "-lc", command]})
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
        return _function_call(call_id, "apply_patch", {"input": patch})
    if "mcp" in step:
        server, tool_name = str(step["mcp"]), str(step["tool"])
        arguments = dict(step.get("arguments") or {})
        namespace = by_name.get(f"mcp__{server}")
        if isinstance(namespace, Mapping) and namespace.get("type") == "namespace":
            call = _function_call(call_id, tool_name, arguments)
            call["namespace"] = f"mcp__{server}"
            return call
        return _function_call(call_id, f"mcp__{server}__{tool_name}", arguments)
    raise ValueError(f"unknown script step: {step!r}")


def _function_call(call_id: str, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "status": "completed",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
    }


def _stream(response_id: str, model: Any, item: dict[str, Any]) -> list[dict[str, Any]]:
    """The event sequence of one streamed response holding one output item."""
    response: dict[str, Any] = {
        "id": response_id,
        "object": "response",
        "status": "in_progress",
        "model": model or DEFAULT_MODEL,
        "output": [],
    }
    done = dict(response, status="completed", output=[item])
    done["usage"] = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
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

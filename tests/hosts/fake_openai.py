"""A scripted, local stand-in for the OpenAI Responses API, for driving the real Codex CLI.

Why: the host tier runs the actual ``codex`` binary so that its hooks, tools and MCP client
do what they really do, and no unit test can show that. Codex needs a model, and an account
would make the suite slow, costly and non-deterministic. Codex accepts any provider that
speaks the Responses wire protocol, so this module serves that protocol on 127.0.0.1 and
answers from a script: each step is the next tool call the "model" makes (a shell command,
an ``apply_patch``, an MCP tool call) or its final text. Every request body is recorded, so
a test can assert on what Codex sent the model: hook context, tool outputs, denials.
This module is the server and its script; the wire's shapes are responses_wire.py's and
the Codex home pointing at it codex_home.py's.

Standard library only: the host tier must not need more than the test runner itself.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Final

from hosts.responses_wire import (
    NO_USAGE,
    OUTPUT_TYPES,
    Step,
    Usage,
    default_usage,
    find_output,
    message,
    offered_name,
    output_text,
    request_text,
    sse,
    stream,
    tool_call,
)

__all__ = ["FakeResponsesAPI"]

log = logging.getLogger(__name__)

#: Substrings of a tool output that mean Codex did not route the call (an MCP server still
#: starting): the fake then repeats the same step with a fresh call id.
_RETRY_MARKERS: Final = ("unsupported call",)
#: How long a step is retried, and the pause before each retry. Why a pause: Codex answers
#: an unrouted call at once, so without one twenty retries pass in a second, well before a
#: Python MCP server (about 2 s to import the SDK) has listed its tools.
_RETRY_FOR_S: Final = 30.0
_RETRY_PAUSE_S: Final = 0.25


class _Server(ThreadingHTTPServer):
    """The HTTP server, carrying a back-reference to the fake for its handlers."""

    daemon_threads = True
    fake: FakeResponsesAPI


class _Handler(BaseHTTPRequestHandler):
    """Routes requests to the fake; kept thin so all state lives in one locked object."""

    server: _Server
    protocol_version = "HTTP/1.1"

    def logmessage(self, format: str, *args: Any) -> None:
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
        payload = b"".join(sse(event) for event in events)
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
        self._sent: list[Usage] = []
        # The MCP step last handed out: (step index, call id, attempt, first sent at).
        self._pending: tuple[int, str, int, float] | None = None
        self._seq = 0
        #: Response ids unique across fakes, as the real API's are (a ledger keys on them).
        self._prefix = secrets.token_hex(4)
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
    def sent(self) -> list[Usage]:
        """The usage each main-loop response carried, in order (retries included; a
        request without tools carries none). A step's own ``"usage"``, else
        :func:`default_usage` of the response's place in the main loop."""
        with self._lock:
            return list(self._sent)

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
                if isinstance(item, Mapping) and item.get("type") in OUTPUT_TYPES:
                    found[str(item.get("call_id"))] = output_text(item)
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
        return [offered_name(tool) for tool in main[request]["tools"]] if main else []

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
            response_id = f"resp_{self._prefix}{self._seq}"
            tools = body.get("tools")
            retry = False
            used: Usage = NO_USAGE
            if not tools:
                item = message(f"msg_{self._seq}", self._final_text)
            else:
                item, retry, own = self._next_item(body, tools)
                used = own or default_usage(len(self._sent) + 1)
                self._sent.append(used)
        if retry:
            time.sleep(_RETRY_PAUSE_S)  # outside the lock: other requests go on meanwhile
        return stream(response_id, body.get("model"), item, used)

    def _next_item(
        self, body: Mapping[str, Any], tools: list[Any]
    ) -> tuple[dict[str, Any], bool, Usage | None]:
        """Choose the output item for a main-loop request (whether it is a retry, and the
        usage its step names).

        Call with the lock held.
        """
        if self._pending is not None:
            index, call_id, attempt, since = self._pending
            self._pending = None
            output = find_output(body, call_id)
            if (
                output is not None
                and time.monotonic() - since < _RETRY_FOR_S
                and any(m in output.lower() for m in _RETRY_MARKERS)
            ):
                return self._emit(index, attempt + 1, tools, since), True, None
        if self._next_step >= len(self._steps):
            return message(f"msg_{self._seq}", self._final_text), False, None
        index = self._next_step
        self._next_step += 1
        own = self._steps[index].get("usage")
        return self._emit(index, 0, tools, time.monotonic()), False, own

    def _emit(self, index: int, attempt: int, tools: list[Any], since: float) -> dict[str, Any]:
        step = self._steps[index]
        call_id = f"call_{index}" if attempt == 0 else f"call_{index}_r{attempt}"
        if "text" in step:
            return message(f"msg_{self._seq}", str(step["text"]))
        item = tool_call(step, call_id, tools)
        if "mcp" in step:
            self._pending = (index, call_id, attempt, since)
        return item

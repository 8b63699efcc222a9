"""A local stand-in for the Anthropic Messages API that real Claude Code talks to.

Claude Code honours `ANTHROPIC_BASE_URL`; pointed here, a real `claude`
runs real tools and therefore fires every hook and calls MCP tools, with no
account and no traffic off the machine. The model is a script: each
main-loop request (one that carries `tools`) takes the next step, a tool
call or a final text; side requests (titles, summaries) get plain text and
take no step. Every request body is recorded, so a test can assert what the
model was told: the session-start context, a deny reason, a wake message.
"""

from __future__ import annotations

import itertools
import json
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "claude-sonnet-4-5"

#: What a response's `usage` says: input, output, cache-creation and cache-read tokens.
Usage = dict[str, int]


def default_usage(n: int) -> Usage:
    """The usage of the n-th main-loop response (1-based): distinct per response and per
    kind, so a sum of any subset is checkable."""
    return {
        "input_tokens": 1000 * n + 1,
        "output_tokens": 10 * n + 2,
        "cache_creation_input_tokens": 100 * n + 3,
        "cache_read_input_tokens": 10000 * n + 4,
    }


#: A side request's (title, summary) usage: none, so it never reaches a ledger.
NO_USAGE: Usage = {
    "input_tokens": 0,
    "output_tokens": 0,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
}


@dataclass(frozen=True)
class ToolCall:
    """The model calls `name` with `input` (e.g. `Edit`, `mcp__coord__whoami`)."""

    name: str
    input: dict[str, Any]
    #: The response's usage; None: `default_usage` of its place in the main loop.
    usage: Usage | None = None


@dataclass(frozen=True)
class Say:
    """The model ends its turn with this text."""

    text: str
    usage: Usage | None = None


Step = ToolCall | Say


@dataclass
class Recorded:
    path: str
    body: dict[str, Any]

    @property
    def main_loop(self) -> bool:
        return bool(self.body.get("tools"))

    def text(self) -> str:
        """Everything the model was shown in this request, as one string."""
        return json.dumps(self.body.get("system", "")) + json.dumps(self.body.get("messages", []))


@dataclass
class FakeAnthropic:
    """Serve on 127.0.0.1 in a thread; `with FakeAnthropic(steps) as api: ... api.url`."""

    steps: list[Step]
    #: The model every response names.
    model: str = MODEL
    requests: list[Recorded] = field(default_factory=list)
    #: The usage each main-loop response carried, in order (side requests carry none).
    sent: list[Usage] = field(default_factory=list)
    #: Set whenever a main-loop request arrives (a test can wait on a new turn).
    turn: threading.Condition = field(default_factory=threading.Condition)
    _next: int = 0
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    #: Message ids are unique across fakes, as the real API's are (a ledger keys on them).
    _prefix: str = field(default_factory=lambda: secrets.token_hex(4))

    def __enter__(self) -> FakeAnthropic:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                if self.path.startswith("/v1/models"):
                    models = [{"id": fake.model, "type": "model"}]
                    self._json({"data": models, "has_more": False})
                else:
                    self._json({})

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.end_headers()

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = {}
                path = self.path.split("?")[0]
                if path.endswith("/count_tokens"):
                    self._json({"input_tokens": 100})
                    return
                if not path.endswith("/v1/messages"):
                    self._json({})
                    return
                step, usage = fake._record(path, body)
                if body.get("stream"):
                    self._stream(step, usage)
                else:
                    self._json(fake._message(step, usage))

            def _json(self, value: Any) -> None:
                data = json.dumps(value).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, step: Step, usage: Usage) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()
                for event in fake._events(step, usage):
                    chunk = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                    self.wfile.write(chunk.encode())
                self.wfile.flush()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # --- the script ---------------------------------------------------------

    def _record(self, path: str, body: dict[str, Any]) -> tuple[Step, Usage]:
        with self.turn:
            recorded = Recorded(path, body)
            self.requests.append(recorded)
            if not recorded.main_loop:
                self.turn.notify_all()
                return Say("done"), NO_USAGE
            if self._next < len(self.steps):
                step = self.steps[self._next]
                self._next += 1
            else:
                step = Say("done")
            usage = step.usage or default_usage(len(self.sent) + 1)
            self.sent.append(usage)
            self.turn.notify_all()
            return step, usage

    def main_requests(self) -> list[Recorded]:
        with self.turn:
            return [r for r in self.requests if r.main_loop]

    def wait_for_main_requests(self, count: int, timeout_s: float) -> bool:
        """Block until `count` main-loop requests have arrived (a turn started)."""
        with self.turn:
            return self.turn.wait_for(
                lambda: sum(r.main_loop for r in self.requests) >= count, timeout_s
            )

    def told(self) -> str:
        """All the model was shown across the main loop, for substring assertions."""
        return "\n".join(r.text() for r in self.main_requests())

    def tool_results(self) -> list[str]:
        """The text of every tool result the model was sent back, in order, deduplicated."""
        seen: dict[str, str] = {}
        for request in self.main_requests():
            for message in request.body.get("messages", []):
                content = message.get("content")
                if not isinstance(content, list):
                    continue
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        seen.setdefault(str(block.get("tool_use_id")), _flatten(block))
        return list(seen.values())

    # --- wire shapes --------------------------------------------------------

    def _message(self, step: Step, usage: Usage) -> dict[str, Any]:
        return {
            "id": f"msg_{self._prefix}{next(self._ids)}",
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [self._block(step)],
            "stop_reason": "tool_use" if isinstance(step, ToolCall) else "end_turn",
            "stop_sequence": None,
            "usage": dict(usage),
        }

    def _block(self, step: Step) -> dict[str, Any]:
        if isinstance(step, ToolCall):
            return {
                "type": "tool_use",
                "id": f"toolu_{next(self._ids):06d}",
                "name": step.name,
                "input": step.input,
            }
        return {"type": "text", "text": step.text}

    def _events(self, step: Step, usage: Usage) -> Iterator[dict[str, Any]]:
        """The stream as the real API sends it: `message_start` carries the input side of
        the usage and a first output count of 1, `message_delta` the final output count."""
        message = self._message(step, usage)
        block = message.pop("content")[0]
        stop_reason = message.pop("stop_reason")
        opening = {**message, "content": [], "stop_reason": None}
        opening["usage"] = {**usage, "output_tokens": min(1, usage["output_tokens"])}
        yield {"type": "message_start", "message": opening}
        if block["type"] == "tool_use":
            started = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            started = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        yield {"type": "content_block_start", "index": 0, "content_block": started}
        yield {"type": "content_block_delta", "index": 0, "delta": delta}
        yield {"type": "content_block_stop", "index": 0}
        yield {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        }
        yield {"type": "message_stop"}


def _flatten(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return ""

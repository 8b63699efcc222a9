"""`GET /live`: the board's server-sent event stream, one message per event, drawn by the
page's script as it comes.

Each message carries the event's seq as its SSE `id`, so a browser that lost the
stream (the server restarted, the network blinked) reconnects with `Last-Event-ID`
and is sent what it missed; behind it, `daemon.Feed` resubscribes from the last seq
when the daemon restarts or closes a lagging subscription. Two resumptions by seq,
one on each side of this server, and nothing in between is lost or doubled.

A message says what the page should show for the task now: its row under the
page's filter (empty: take it off), its line in "Waiting for you" (empty: none),
and whether its done-ness changed (then the rows that depend on it are re-read,
since the daemon sends `task.unblocked` only for a dependent's *last* dependency).

The stream also asks for the events that have no task (1.2: `message.sent`,
`slot.*`, `land.*`): each is an `other` message naming only its type, and the
messages, slots and landing pages read their list again when one of theirs comes
(the board's rows ignore them).
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import parse_qs

import msgspec
import trio

from coordd_client.protocol.wire import EVENT_TYPES, Event
from coordd_client.web.acts import Site
from coordd_client.web.daemon import AnyEvent, Feed
from coordd_client.web.guard import Receive, Scope, Send
from coordd_client.web.rows import View, gate_row, is_gate, task_row

_encode = msgspec.json.Encoder().encode

#: What the page's stream subscribes to: every task event, and the task-less ones the
#: messages, slots and landing pages show (not `file.edited`: no page shows edits).
LIVE_TYPES = tuple(t for t in EVENT_TYPES if t.startswith(("task.", "message.", "slot.", "land.")))


class Message(msgspec.Struct, frozen=True):
    id: int
    row: str
    gate: str
    done_changed: bool


def message(event: AnyEvent, view: View, human: str, csrf: str, now: datetime) -> bytes:
    """One SSE message for `event`, as the page with `view` should draw it."""
    task = event.task if isinstance(event, Event) else None
    if task is None:  # a message, slot or landing event: the page reads its list again
        data = _encode({"type": event.type}).decode()
        return f"id: {event.seq}\nevent: other\ndata: {data}\n\n".encode()
    row = task_row(task, now) if view.filter().admits(task) else ""
    gate = gate_row(task, now, csrf) if is_gate(task, human) else ""
    done_changed = event.type == "task.completed" or (
        event.type == "task.reopened" and task.state == "pending"
    )
    data = _encode(Message(task.id, str(row), str(gate), done_changed)).decode()
    return f"id: {event.seq}\nevent: task\ndata: {data}\n\n".encode()


def _after(scope: Scope, query: dict[str, list[str]]) -> int | None:
    """Where to resume: the browser's `Last-Event-ID`, else the page's `after`."""
    for key, value in scope.get("headers", ()):
        if key == b"last-event-id":
            text = bytes(value).decode("latin-1")
            return int(text) if text.isdigit() else None
    after = (query.get("after") or [""])[0]
    return int(after) if after.isdigit() else None


class LiveStream:
    """The ASGI endpoint itself (not a generator: the feed runs in a nursery that ends
    when the browser goes away)."""

    def __init__(self, site: Site, csrf: str) -> None:
        self.site = site
        self.csrf = csrf

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        human, csrf = self.site.human, self.csrf
        query = parse_qs(bytes(scope.get("query_string", b"")).decode("latin-1"))
        view = View.from_query(query)
        headers = [(b"content-type", b"text/event-stream; charset=utf-8")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        lock = trio.Lock()

        async def write(chunk: bytes) -> None:
            async with lock:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})

        async def deliver(event: AnyEvent) -> None:
            await write(message(event, view, human, csrf, datetime.now(UTC)))

        async def status(word: str) -> None:
            await write(f"event: status\ndata: {word}\n\n".encode())

        feed = Feed(self.site.socket, self.site.project, deliver, status, LIVE_TYPES)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(feed.run, _after(scope, query))
            while (await receive())["type"] != "http.disconnect":
                pass
            nursery.cancel_scope.cancel()

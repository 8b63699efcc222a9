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

A browser that does not read (a stopped tab, a raw socket) must not make this
server hold the board's history for it: each stream keeps at most
`BACKLOG_BYTES` of messages not yet written (`Outbox`), and a stream that falls
that far behind is ended. The feed never waits for the browser (a feed that
waited would leave the daemon's events to pile up in the client's buffer), and
what was not written is dropped: the browser's EventSource reconnects by itself
with `Last-Event-ID`, the seq of the last message it got whole, and the new
stream replays from there.
"""

from __future__ import annotations

from collections import deque
from datetime import UTC, datetime
from urllib.parse import parse_qs

import msgspec
import trio

from coordd_apps.web.acts import Site
from coordd_apps.web.daemon import AnyEvent, Feed
from coordd_apps.web.guard import Receive, Scope, Send
from coordd_apps.web.rows import View, gate_row, is_gate, task_row
from coordd_wire.wire import EVENT_TYPES, Event

_encode = msgspec.json.Encoder().encode

#: What the page's stream subscribes to: every task event, and the task-less ones the
#: messages, slots and landing pages show, and `usage.reported` (the board's cost cells,
#: issue 48); not `file.edited`: no page shows edits.
LIVE_TYPES = tuple(
    t
    for t in EVENT_TYPES
    if t.startswith(("task.", "message.", "slot.", "land.")) or t == "usage.reported"
)

#: Bytes of messages one stream may hold for its browser before it is ended (a row
#: is some hundreds of bytes: this is a browser about a thousand events behind,
#: on top of what the sockets hold).
BACKLOG_BYTES = 512 * 1024


class Message(msgspec.Struct, frozen=True):
    id: int
    row: str
    gate: str
    done_changed: bool


def message(event: AnyEvent, view: View, human: str, csrf: str, now: datetime) -> bytes:
    """One SSE message for `event`, as the page with `view` should draw it."""
    task = event.task if isinstance(event, Event) else None
    if task is None:  # a message, slot or landing event: the page reads its list again
        said: dict[str, object] = {"type": event.type}
        if isinstance(event, Event) and event.usage is not None:  # the rows to read again
            said["tasks"] = [i for i in event.usage.task_ids if i is not None]
        data = _encode(said).decode()
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


class Outbox:
    """The messages one stream has not written yet, at most `limit` bytes of them."""

    def __init__(self, limit: int = BACKLOG_BYTES) -> None:
        self.limit = limit
        self.size = 0
        self._chunks: deque[bytes] = deque()
        self._ready = trio.Event()

    def put(self, chunk: bytes) -> bool:
        """Queue `chunk` without waiting; False (and nothing queued) when it would pass
        the limit: the browser is too far behind, and the stream must end. An empty
        outbox takes any one message, so none is too long ever to be sent."""
        if self._chunks and self.size + len(chunk) > self.limit:
            return False
        self._chunks.append(chunk)
        self.size += len(chunk)
        self._ready.set()
        return True

    async def take(self) -> bytes:
        """Everything queued, as one write, once there is something."""
        while not self._chunks:
            self._ready = trio.Event()
            await self._ready.wait()
        chunk = b"".join(self._chunks)
        self._chunks.clear()
        self.size = 0
        return chunk


class LiveStream:
    """The ASGI endpoint itself (not a generator: the feed, the writer and the watch
    for the browser leaving run in a nursery, and the first of them to end the
    stream cancels the others)."""

    def __init__(self, site: Site, csrf: str) -> None:
        self.site = site
        self.csrf = csrf

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        human, csrf = self.site.human, self.csrf
        query = parse_qs(bytes(scope.get("query_string", b"")).decode("latin-1"))
        view = View.from_query(query)
        headers = [(b"content-type", b"text/event-stream; charset=utf-8")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        outbox = Outbox()
        left = False  # the browser went away: nothing more to send it
        async with trio.open_nursery() as nursery:

            def put(chunk: bytes) -> None:
                if not outbox.put(chunk):
                    nursery.cancel_scope.cancel()  # too far behind: end; it resumes by seq

            async def deliver(event: AnyEvent) -> None:
                put(message(event, view, human, csrf, datetime.now(UTC)))

            async def status(word: str) -> None:
                put(f"event: status\ndata: {word}\n\n".encode())

            feed = Feed(self.site.socket, self.site.project, deliver, status, LIVE_TYPES)
            nursery.start_soon(feed.run, _after(scope, query))
            nursery.start_soon(_write, outbox, send)
            await _until_gone(receive)
            left = True
            nursery.cancel_scope.cancel()
        if not left:
            await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _write(outbox: Outbox, send: Send) -> None:
    """The outbox to the browser, as fast as it reads (a write waits while it does not)."""
    while True:
        chunk = await outbox.take()
        await send({"type": "http.response.body", "body": chunk, "more_body": True})


async def _until_gone(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass

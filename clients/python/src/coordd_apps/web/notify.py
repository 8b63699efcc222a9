"""Webhooks: a POST to a URL of the user's for each chosen event, signed with a shared
secret so the receiver knows it came from this `coord web`.

The body is JSON: `{"kind": "gate" | <event type>, "event": <the event as the daemon
sent it>}`. The signature is `X-Coord-Signature: sha256=<hex>`, the HMAC-SHA256 of
the exact body bytes under the secret (as GitHub's `X-Hub-Signature-256`); the
receiver recomputes it and compares in constant time. `X-Coord-Event` names the
kind and `X-Coord-Seq` the event's seq, so a receiver can drop a repeat.

Kinds: any event type of the page's feed (`task.*`, `message.sent`, `slot.*`,
`land.*`: `task.failed`, `land.failed`, ...), and `gate`: a task
that starts waiting for the human (posted or assigned to `human-<user>`). The feed
starts at the newest seq when `coord web` starts and resumes by seq across daemon
restarts.

Delivery: each receiver (`--webhook`, given once or more) has its own queue and its
own task, so a slow or dead receiver holds back only itself. One delivery has a total
deadline (`DEADLINE_S`, the whole exchange, not each read). A 2xx is delivered; a 3xx
is a failure and is never followed; a 4xx other than 408/429 is given up at once (the
same request would get the same answer); anything else (no connection, the deadline,
5xx, 408, 429) is retried with backoff, the head of the queue first, so a receiver
sees its notifications in order. A queue longer than `MAX_BACKLOG` drops its oldest
waiting one (not the one being delivered).
Every failure, give-up and drop is a line on stderr, and the board shows each
receiver's counts and backlog (`ReceiverQueue.status`).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import sys
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import msgspec
import trio

from coordd_apps.web.http_post import PostFailed, post
from coordd_apps.web.markup import Html, join, tag
from coordd_wire.wire import EVENT_TYPES, Event
from coordd_wire.wire_messages import MessageEvent

if TYPE_CHECKING:
    from coordd_apps.web.acts import Site

#: Seconds one delivery may take in all (connect, send, the answer's head).
DEADLINE_S = 10.0
#: Seconds before each retry of a failed delivery; the last repeats.
RETRY_DELAYS_S = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
#: Notifications a receiver's queue holds; past it the oldest waiting is dropped (and
#: said). At least 2: the head, being delivered, is never the one dropped.
MAX_BACKLOG = 1000
#: Statuses worth the same request again (the rest of 4xx would be refused again).
RETRYABLE_4XX = frozenset({408, 429})
GATE = "gate"
SIGNATURE_HEADER = "X-Coord-Signature"


def sign(secret: bytes, body: bytes) -> str:
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def kinds_of(event: Event | MessageEvent, human: str) -> list[str]:
    """The kinds this event is: its type, and `gate` when it starts a wait for the human."""
    found: list[str] = [event.type]
    task = event.task if isinstance(event, Event) else None
    if (
        event.type in ("task.posted", "task.assigned")
        and task is not None
        and task.assignee == human
        and task.state == "pending"
    ):
        found.append(GATE)
    return found


class _Body(msgspec.Struct):
    kind: str
    event: Event | MessageEvent


def _names_a_host(url: str) -> bool:
    """Whether `url` has a host and, if it has a port, a valid one: refused at start
    rather than failing every delivery."""
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - read for its ValueError: not a number, or out of range
    except ValueError:
        return False
    return bool(parts.hostname)


def chosen_kinds(kinds: Iterable[str]) -> frozenset[str]:
    """What `--notify-on` names: `gate`, event types, and families (`task.*`). A kind
    that is none of them is refused: it would start a receiver that never hears a
    thing (`bogus`, or `task.*` taken literally, once did)."""
    chosen: set[str] = set()
    for kind in kinds:
        family = [t for t in EVENT_TYPES if kind.endswith(".*") and t.startswith(kind[:-1])]
        if kind == GATE or kind in EVENT_TYPES:
            chosen.add(kind)
        elif family:
            chosen.update(family)
        else:
            families = sorted({f"{t.split('.')[0]}.*" for t in EVENT_TYPES})
            raise ValueError(
                f"--notify-on: {kind!r} is not a kind: name `gate`, an event type"
                f" ({', '.join(EVENT_TYPES)}) or a family ({', '.join(families)})"
            )
    if not chosen:
        raise ValueError("--notify-on names no kind (e.g. gate,task.failed)")
    return frozenset(chosen)


@dataclass(frozen=True)
class Webhook:
    url: str
    secret: bytes
    kinds: frozenset[str]

    @classmethod
    def of(cls, url: str, secret: str, kinds: Iterable[str]) -> Webhook:
        if not url.startswith(("http://", "https://")) or not _names_a_host(url):
            raise ValueError(f"a webhook is an http:// or https:// URL, not {url!r}")
        if not secret:
            raise ValueError("a webhook needs a secret ($COORD_WEBHOOK_SECRET)")
        return cls(url, secret.encode(), chosen_kinds(kinds))

    @property
    def shown(self) -> str:
        """The URL without its query or user part, which may carry a secret of the
        receiver's: what the page and the log name it by."""
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"

    def request(
        self, kind: str, event: Event | MessageEvent
    ) -> tuple[bytes, list[tuple[str, str]]]:
        """The signed body and headers of one notification."""
        body = msgspec.json.encode(_Body(kind, event))
        headers = [
            ("Content-Type", "application/json"),
            (SIGNATURE_HEADER, sign(self.secret, body)),
            ("X-Coord-Event", kind),
            ("X-Coord-Seq", str(event.seq)),
            ("User-Agent", "coord-web"),
        ]
        return body, headers


@dataclass(frozen=True)
class Note:
    """One notification waiting for its receiver."""

    kind: str
    event: Event | MessageEvent


class Failed(Exception):
    """A delivery that did not succeed; `final` when retrying cannot help."""

    def __init__(self, reason: str, *, final: bool = False) -> None:
        super().__init__(reason)
        self.final = final


@dataclass(frozen=True)
class Status:
    """One receiver as the board shows it."""

    url: str
    delivered: int
    failed: int
    dropped: int
    backlog: int
    last_failure: str | None


@dataclass
class ReceiverQueue:
    """One receiver's queue and its counts; `run` delivers the queue in order."""

    hook: Webhook
    queue: deque[Note] = field(default_factory=deque)
    delivered: int = 0
    #: Attempts that failed (each retry that fails counts), and notifications dropped:
    #: given up (a final failure) or pushed out of a full queue.
    failed: int = 0
    dropped: int = 0
    last_failure: str | None = None
    wake: trio.Event = field(default_factory=trio.Event)

    def status(self) -> Status:
        return Status(
            self.hook.shown,
            self.delivered,
            self.failed,
            self.dropped,
            len(self.queue),
            self.last_failure,
        )

    def offer(self, event: Event | MessageEvent, human: str) -> None:
        """Queue the kinds of `event` this receiver asked for (never waits)."""
        for kind in kinds_of(event, human):
            if kind in self.hook.kinds:
                self.queue.append(Note(kind, event))
                if len(self.queue) > MAX_BACKLOG:
                    # The oldest waiting, not the head: that one is being delivered.
                    lost = self.queue[1]
                    del self.queue[1]
                    self.dropped += 1
                    self._log(lost, f"dropped: more than {MAX_BACKLOG} waiting")
                self.wake.set()

    async def run(self) -> None:
        """Forever: deliver the head of the queue, retrying it until it is delivered
        or given up, before the next (the receiver's order is the feed's)."""
        while True:
            while not self.queue:
                self.wake = trio.Event()
                await self.wake.wait()
            await self._deliver_head()

    async def _deliver_head(self) -> None:
        note = self.queue[0]
        for attempt in itertools.count(1):
            try:
                await self._send(note)
            except Failed as exc:
                self.failed += 1
                self.last_failure = f"{note.kind} (seq {note.event.seq}): {exc}"
                if exc.final:
                    self.dropped += 1
                    self._log(note, f"not delivered, given up: {exc}")
                    break
                delay = RETRY_DELAYS_S[min(attempt, len(RETRY_DELAYS_S)) - 1]
                self._log(
                    note,
                    f"not delivered (attempt {attempt}): {exc}; retrying in {delay:g} s,"
                    f" {len(self.queue)} waiting",
                )
                await trio.sleep(delay)
            else:
                self.delivered += 1
                break
        self.queue.popleft()

    async def _send(self, note: Note) -> None:
        body, headers = self.hook.request(note.kind, note.event)
        status = 0
        with trio.move_on_after(DEADLINE_S):
            try:
                status = await post(self.hook.url, body, headers)
            except PostFailed as exc:
                raise Failed(str(exc)) from None
        if status == 0:
            raise Failed(f"no answer within {DEADLINE_S:g} s")
        if 200 <= status < 300:
            return
        if 300 <= status < 400:
            raise Failed(f"answered {status}: a redirect is not followed", final=True)
        retry = status >= 500 or status in RETRYABLE_4XX
        raise Failed(f"answered {status}", final=not retry)

    def _log(self, note: Note, what: str) -> None:
        sys.stderr.write(
            f"coord web: webhook {self.hook.shown}: {note.kind} (seq {note.event.seq}) {what}\n"
        )
        sys.stderr.flush()


#: The token ledger's events (docs/PROTOCOL-1.2.md section 15) a receiver may choose.
LEDGER_TYPES = ("usage.budget", "usage.reported")


class Notifier:
    """Every receiver's queue, fed by one event feed."""

    def __init__(self, hooks: Sequence[Webhook]) -> None:
        self.queues = [ReceiverQueue(hook) for hook in hooks]

    def status(self) -> list[Status]:
        return [queue.status() for queue in self.queues]

    async def run(self, site: Site, after_seq: int) -> None:
        """Deliver every chosen event after `after_seq` (read before the address was
        printed, so whatever happens once the page can be opened is delivered)."""
        from coordd_apps.web.daemon import Feed
        from coordd_apps.web.live import LIVE_TYPES

        async def offer(event: Event | MessageEvent) -> None:
            for queue in self.queues:
                queue.offer(event, site.human)

        async def status(word: str) -> None:
            return None

        async with trio.open_nursery() as nursery:
            for queue in self.queues:
                nursery.start_soon(queue.run)
            # The page's types: task events, messages, slots and landings (1.2's events
            # with no task reach only a subscriber that names them); and the ledger's
            # that a receiver chose (issue 48: `--notify-on usage.budget`), named only
            # then, since a daemon without the ledger refuses them in `types`.
            chosen = {kind for queue in self.queues for kind in queue.hook.kinds}
            types = (*LIVE_TYPES, *sorted(t for t in LEDGER_TYPES if t in chosen))
            await Feed(site.socket, site.project, offer, status, types).run(after_seq)


def webhooks(statuses: Sequence[Status]) -> Html:
    """Each receiver's counts, backlog and last failure, at the top of the board when
    `coord web` delivers webhooks: a failing receiver is seen here, not only in its log."""
    if not statuses:
        return Html("")
    items = []
    for s in statuses:
        words = (
            f"{s.url}: {s.delivered} delivered, {s.backlog} waiting,"
            f" {s.failed} failed attempts, {s.dropped} dropped"
        )
        if s.last_failure:
            words += f"; last failure: {s.last_failure}"
        items.append(tag("li", words, class_="failing" if s.failed or s.backlog else None))
    return tag("section", tag("h2", "Webhooks"), tag("ul", join(items)), id="webhooks")

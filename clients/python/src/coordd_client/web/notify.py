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
restarts; a delivery that fails is reported on stderr and not retried.
"""

from __future__ import annotations

import hashlib
import hmac
import sys
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import msgspec
import trio

from coordd_client.protocol.talk import MessageEvent
from coordd_client.protocol.wire import Event

if TYPE_CHECKING:
    from coordd_client.web.acts import Site

#: Seconds one delivery may take before it is given up.
DELIVERY_TIMEOUT_S = 10.0
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


@dataclass(frozen=True)
class Webhook:
    url: str
    secret: bytes
    kinds: frozenset[str]

    @classmethod
    def of(cls, url: str, secret: str, kinds: Iterable[str]) -> Webhook:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"a webhook is an http:// or https:// URL, not {url!r}")
        if not secret:
            raise ValueError("a webhook needs a secret ($COORD_WEBHOOK_SECRET)")
        return cls(url, secret.encode(), frozenset(kinds))

    async def run(self, site: Site, after_seq: int) -> None:
        """Deliver every chosen event after `after_seq` (read before the address was
        printed, so whatever happens once the page can be opened is delivered)."""
        from coordd_client.web.daemon import Feed
        from coordd_client.web.live import LIVE_TYPES

        async def deliver(event: Event) -> None:
            for kind in kinds_of(event, site.human):
                if kind in self.kinds:
                    await trio.to_thread.run_sync(self.send, kind, event)

        async def status(word: str) -> None:
            return None

        # The page's types: task events, messages, slots and landings (1.2's events with
        # no task reach only a subscriber that names them).
        await Feed(site.socket, site.project, deliver, status, LIVE_TYPES).run(after_seq)

    def send(self, kind: str, event: Event) -> bool:
        """One signed POST; whether the receiver answered 2xx."""
        body = msgspec.json.encode(_Body(kind, event))
        request = urllib.request.Request(
            self.url,
            data=body,
            method="POST",
            headers={
                "Content-Type": "application/json",
                SIGNATURE_HEADER: sign(self.secret, body),
                "X-Coord-Event": kind,
                "X-Coord-Seq": str(event.seq),
                "User-Agent": "coord-web",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=DELIVERY_TIMEOUT_S) as answer:
                return 200 <= int(answer.status) < 300
        except (urllib.error.URLError, OSError) as exc:
            sys.stderr.write(f"coord web: webhook {kind} (seq {event.seq}) not delivered: {exc}\n")
            return False

"""What the messages, slots and landing pages read (1.2 sections 12 to 14), through
the trio client only: the human's unread mail, the project's open asks, a task's
thread, the live leases, and each target's landing queue with what is in its way."""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

from coordd_apps.web.daemon import message_events
from coordd_client.aio import AsyncClient
from coordd_client.human import inbox_names, merged
from coordd_client.paging import EVENT_PAGE
from coordd_wire.wire import Landing
from coordd_wire.wire_messages import Message

#: The most recent ended landings the landing page shows.
RECENT_LANDINGS = 20
#: The most unread messages the page shows at once (`message.read`'s own bound is 1000).
INBOX_LIMIT = 200


async def inbox(client: AsyncClient, human: str) -> list[Message]:
    """The human's unread messages, with those of its former terminal names (`human.py`),
    oldest first; reading moves no cursor (the page's "mark all read" does, through
    `message.ack`)."""
    known = [a.agent for a in (await client.agents()).agents]
    found = [
        (await client.read_messages(agent=name, limit=INBOX_LIMIT)).messages
        for name in inbox_names(human, known)
    ]
    return merged(found)[:INBOX_LIMIT]


def _answered(sent: list[Message]) -> set[int]:
    """The ids among `sent` that a later one of `sent` answers: its `reply_to`, from
    another sender (section 12: a question's own sender adding to it closes nothing)."""
    by_id = {m.id: m for m in sent}
    return {
        m.reply_to
        for m in sent
        if m.reply_to is not None and m.reply_to in by_id and m.sender != by_id[m.reply_to].sender
    }


async def open_asks(client: AsyncClient, project: str | None) -> list[Message]:
    """Release requests and questions still open, oldest first.

    Section 12 has no list of them: the `message.sent` events say which were sent
    (each as it was sent, open), and which were answered since (a request's answer,
    a question's first reply by another agent, each `reply_to` it); `message.get`
    is asked only about the rest, since a request can also expire without an event."""
    sent = [e.message for e in await message_events(client, project)]
    closed = _answered(sent)
    maybe = [m for m in sent if m.kind in ("question", "request") and m.id not in closed]
    now_open = []
    for ask in maybe:
        current = (await client.get_message(ask.id)).message
        if current.open:
            now_open.append(current)
    return now_open


async def thread(client: AsyncClient, task_id: int) -> list[Message]:
    """A task's messages, oldest first, each as it was sent, except that a question
    answered on the thread is shown closed (a reply inherits its question's task)."""
    sent = [e.message for e in await message_events(client, None, task_id)]
    closed = _answered(sent)
    return [msgspec.structs.replace(m, open=False) if m.id in closed else m for m in sent]


@dataclass
class Queue:
    """One target's queue: its open entries in order, who holds its landing slot, and,
    per entry id, what is in the way (entries ahead, shared paths, reservations)."""

    onto: str
    entries: list[Landing] = field(default_factory=list)
    holder: str | None = None
    in_the_way: dict[int, list[str]] = field(default_factory=dict)


async def queues(client: AsyncClient, project: str | None) -> list[Queue]:
    """`land.list`, grouped by target, with `land.enqueue`'s view of the way: the
    entries ahead, the paths shared with them, and other agents' exclusive
    reservations over the entry's paths (`reservation.check`)."""
    by_onto: dict[str, Queue] = {}
    for entry in (await client.landings(project=project)).landings:
        by_onto.setdefault(entry.onto, Queue(entry.onto)).entries.append(entry)
    for queue in by_onto.values():
        slot = await client.slots(project=project, name=f"land:{queue.onto}")
        queue.holder = slot.leases[0].agent if slot.leases else None
        for position, entry in enumerate(queue.entries):
            notes = []
            ahead = queue.entries[:position]
            if ahead:
                notes.append("behind " + " ".join(f"#{a.id}" for a in ahead))
            for other in ahead:
                shared = sorted(set(other.paths) & set(entry.paths))
                if shared:
                    notes.append(f"shares {', '.join(shared)} with #{other.id}")
            if entry.paths:
                checked = await client.check_paths(
                    entry.paths, project=entry.project, agent=entry.agent
                )
                for c in checked.conflicts:
                    if c.reservation.exclusive:
                        notes.append(f"{c.path} reserved by {c.reservation.agent}")
            queue.in_the_way[entry.id] = notes
    return list(by_onto.values())


async def recent_landings(
    client: AsyncClient, project: str | None, limit: int = RECENT_LANDINGS
) -> list[Landing]:
    """The `limit` landings that ended last (landed or failed), newest first.

    `land.list` answers the live open entries only (section 14), so a landing
    leaves it the moment it ends; the `land.landed` and `land.failed` events carry
    the entry as it ended (outcome, reason, commit), and `events.since` keeps them:
    the page reads them rather than ask the daemon for a new method."""
    ended: list[Landing] = []
    after = 0
    while True:
        page = await client.events_since(
            after_seq=after,
            limit=EVENT_PAGE,
            project=project,
            types=["land.landed", "land.failed"],
        )
        ended += [e.landing for e in page.events if e.landing is not None]
        ended = ended[-limit:]
        if len(page.events) < EVENT_PAGE:
            return ended[::-1]
        after = page.last_seq

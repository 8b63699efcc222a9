"""`coord top`'s Messages tab (issue 34, docs/PROTOCOL-1.2.md section 12): the human's
unread messages, open release requests and questions first, as plain rows.

Read on the side panes' cadence rather than from a `message.sent` subscription: a
request's state changes with no event of its own (an open request past `expires_at`
is `expired` only when read), and the board's follower decodes task events alone.
No Textual here; the demo board's inbox is `demo.MESSAGES`, the pane's columns
`layout.MESSAGE_COLUMNS`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from coordd_apps.wording import render_messages
from coordd_client import human
from coordd_client.client import Client
from coordd_client.text import clean
from coordd_wire.errors import MethodNotFound
from coordd_wire.wire_messages import Message

#: Unread messages read per refresh (the protocol's default page).
INBOX_READ = 100
#: The Messages table's columns, as `rows` fills them.
COLUMNS = ("ID", "FROM", "KIND", "STATE", "TASK", "MESSAGE")


class Inbox(NamedTuple):
    """What the tab shows, and how far `k` may acknowledge, per name read."""

    messages: list[Message]
    #: For each name read (the human's, and its former terminal names: `human.py`), the
    #: newest id whose acknowledgement marks only shown messages read: a cursor is the
    #: name's, across projects, so it stops below another project's unread one.
    acks: dict[str, int]


def inbox(client: Client, agent: str, project: str | None, known: Iterable[str] = ()) -> Inbox:
    """`agent`'s unread messages in `project` (None: every project), those waiting for an
    answer first, with those of the human's former names among `known` (`agent.list`);
    none from a daemon without messages."""
    found: list[list[Message]] = []
    acks: dict[str, int] = {}
    try:
        for name in human.inbox_names(agent, known):
            unread = client.read_messages(agent=name, limit=INBOX_READ).messages
            for m in unread:  # ascending id
                if project is not None and m.project != project:
                    break
                acks[name] = m.id
            found.append([m for m in unread if project is None or m.project == project])
    except MethodNotFound:
        return Inbox([], {})
    return Inbox(sorted(human.merged(found), key=lambda m: (not m.open, m.id)), acks)


def state(message: Message) -> str:
    """`open`, a request's status, `answered`, or empty for a plain message."""
    if message.request is not None:
        return message.request.status
    if message.kind == "question":
        return "open" if message.open else "answered"
    return ""


def kind(message: Message) -> str:
    """A request says what it asks for: `release src/**` or `release #42`."""
    request = message.request
    if request is None:
        return message.kind
    asked = (
        f"#{request.task_id}" if request.task_id is not None else " ".join(request.patterns or ())
    )
    return f"release {asked}"


def rows(messages: Sequence[Message]) -> list[tuple[str, ...]]:
    """One row per message, every cell cleaned of controls (they are agents' text)."""
    return [
        (
            str(m.id),
            clean(m.sender),
            clean(kind(m)),
            state(m),
            f"#{m.task_id}" if m.task_id else "",
            render_messages.summary(m.body),
        )
        for m in messages
    ]


def is_open_request(message: Message) -> bool:
    """Only an open request can be answered (anything else is -32002 or -32001)."""
    return message.request is not None and message.request.status == "open"

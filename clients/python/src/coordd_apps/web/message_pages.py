"""The pages of what 1.2 added beside the board: messages (the human's inbox, the
project's open release requests and questions, a task's thread), slots, and the
landing queue. Pure functions of what `wire_messages.py` read, as `pages.py` is.

Each page's list sits in one `#live-part` element naming the event types that
change it (`data-types`); the page's script reads the same URL with `?part=1` when
one of them comes down the stream, and puts the answer in its place. Every body,
name and pattern an agent wrote goes through `tag`, so a `<script>` is text.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from coordd_apps.web.markup import Html, join, tag, void
from coordd_apps.web.messages import Queue
from coordd_apps.wording import render
from coordd_apps.wording.advice import plural
from coordd_apps.wording.render import age
from coordd_client.human import answering_as
from coordd_wire.wire import Landing, SlotLease
from coordd_wire.wire_messages import Message

NOTHING = Html("")


def _hidden(name: str, value: str) -> Html:
    return void("input", type="hidden", name=name, value=value)


def live_part(body: Html, types: str, last_seq: int) -> Html:
    """The part of a page the stream refreshes; `types` is a prefix (`message.`)."""
    return tag("div", body, id="live-part", data_types=types, data_seq=str(last_seq))


def _form(action: str, label: str, csrf: str, *fields: Html, class_: str | None = None) -> Html:
    return tag(
        "form",
        void("input", type="hidden", name="csrf", value=csrf),
        *fields,
        tag("button", label, type="submit"),
        method="post",
        action=action,
        class_=class_,
    )


def _text(name: str, placeholder: str, *, required: bool = False, size: str = "24") -> Html:
    return void(
        "input", type="text", name=name, placeholder=placeholder, required=required, size=size
    )


def _about(message: Message, now: datetime) -> str:
    """`from codex-3 to human-ada · question · task #4 · re #2 · 3m ago`."""
    to = {"agent": message.to or "-", "project": "everyone", "task": "the thread"}
    parts = [f"#{message.id} from {message.sender} to {to[message.audience]}", message.kind]
    request = message.request
    if request is not None:
        asked = f"task #{request.task_id}" if request.task_id else ", ".join(request.patterns or ())
        parts.append(f"asks {request.holder} for {asked}: {request.status}")
        if request.reason:
            parts.append(f"reason: {request.reason}")
    elif message.kind == "question":
        parts.append("open" if message.open else "answered")
    if message.task_id is not None:
        parts.append(f"task #{message.task_id}")
    if message.reply_to is not None:
        parts.append(f"re #{message.reply_to}")
    parts.append(f"{age(message.created_at, now)} ago")
    return " · ".join(parts)


def message_item(message: Message, now: datetime, answers: Html = NOTHING) -> Html:
    return tag(
        "li",
        tag("span", _about(message, now), class_="about"),
        tag("pre", message.body, class_="msg-body"),
        answers,
        id=f"m{message.id}",
        class_=f"msg k-{message.kind}",
    )


def _answers(message: Message, human: str, csrf: str) -> Html:
    """What the human can do with an open ask: a request to them, any question."""
    request = message.request
    act = f"/act/answer/{message.id}"
    if request is not None:
        # To the human, or to a former terminal name of theirs (answered as it, `human.py`).
        if answering_as(request.holder, human) != request.holder:
            return tag("p", f"waiting on {request.holder}", class_="waiting")
        pick = [
            _form(act, "Approve", csrf, _hidden("decision", "approve")),
            _form(act, "Deny", csrf, _hidden("decision", "deny"), _text("reason", "why not")),
        ]
        if request.task_id is None:  # a claim cannot be narrowed
            patterns = _text("patterns", "the patterns to hand over", required=True)
            pick.append(_form(act, "Narrow", csrf, _hidden("decision", "narrow"), patterns))
        return tag("div", join(pick), class_="answers")
    answer = _text("body", "your answer", required=True, size="48")
    reply = _form(f"/act/reply/{message.id}", "Reply", csrf, answer)
    return tag("div", reply, class_="answers")


def messages_part(
    inbox: Sequence[Message], asks: Sequence[Message], now: datetime, human: str, csrf: str
) -> Html:
    """The inbox, then the open requests and questions, each with its answer forms."""
    mail = join(message_item(m, now) for m in inbox) or tag("li", "nothing unread")
    upto = _hidden("up_to", str(inbox[-1].id)) if inbox else NOTHING
    ack = _form("/act/ack", "mark all read", csrf, upto) if inbox else NOTHING
    open_asks = join(message_item(m, now, _answers(m, human, csrf)) for m in asks)
    return (
        tag("h2", f"Inbox of {human} ({len(inbox)} unread)")
        + tag("ul", mail, id="inbox", class_="messages")
        + ack
        + tag("h2", f"Open release requests and questions ({len(asks)})")
        + tag("ul", open_asks or tag("li", "none open"), id="asks", class_="messages")
    )


def send_form(csrf: str, task_id: int | None = None) -> Html:
    """A message to an agent, the project (no `to`), or on a task's thread."""
    fields = [
        tag("textarea", "", name="body", rows="3", cols="60", required=True, maxlength="8192"),
        _text("to", "agent, or empty for the project", size="30"),
    ]
    if task_id is None:
        fields.append(_text("task", "on task # (optional)", size="18"))
    else:
        fields.append(void("input", type="hidden", name="task", value=str(task_id)))
    kind = tag(
        "select",
        tag("option", "message", value="message"),
        tag("option", "question", value="question"),
        name="kind",
    )
    return _form("/act/send", "send…", csrf, *fields, kind, class_="send")


def messages_page(part: Html, csrf: str) -> Html:
    return tag("h1", "Messages") + part + tag("h2", "Send a message") + send_form(csrf)


def thread(messages: Sequence[Message], task_id: int, now: datetime, csrf: str) -> Html:
    """A task's thread on its page: its messages, oldest first, and a form to add one."""
    items = join(message_item(m, now) for m in messages) or tag("li", "no messages yet")
    return (
        tag("h2", f"Thread ({plural(len(messages), 'message')})")
        + tag("ul", items, id="thread", class_="messages")
        + send_form(csrf, task_id)
    )


def slots_part(leases: Sequence[SlotLease], now: datetime) -> Html:
    head = ("name", "holder", "capacity / port", "task", "fence", "expires", "held for")
    rows = [
        tag(
            "tr",
            join(
                tag("td", c)
                for c in (
                    lease.name,
                    lease.agent,
                    f"port {lease.port}" if lease.port is not None else f"of {lease.capacity}",
                    f"#{lease.task_id}" if lease.task_id is not None else "-",
                    lease.fence,
                    render.relative(lease.expires_at, now),
                    age(lease.created_at, now),
                )
            ),
            id=f"l{lease.id}",
        )
        for lease in leases
    ]
    table = tag("table", tag("tr", join(tag("th", c) for c in head)), join(rows), id="slots")
    return tag("h1", f"Slots and ports ({plural(len(leases), 'live lease')})") + table


def landing_part(queues: Sequence[Queue], recent: Sequence[Landing], now: datetime) -> Html:
    """One table per target: the queue in order, and what is in each entry's way; then
    the landings that ended last (`messages.recent_landings`), newest first."""
    parts = [tag("h1", "Landing queue")]
    if not queues:
        parts.append(tag("p", "nothing queued", id="queue-empty"))
    head = ("#", "branch", "agent", "state", "task", "paths", "in the way", "queued")
    for queue in queues:
        holder = f"landing slot held by {queue.holder}" if queue.holder else "landing slot free"
        rows = [
            tag(
                "tr",
                join(
                    tag("td", c)
                    for c in (
                        entry.id,
                        entry.branch,
                        entry.agent,
                        entry.state,
                        f"#{entry.task_id}" if entry.task_id is not None else "-",
                        ", ".join(entry.paths) or "-",
                        "; ".join(queue.in_the_way.get(entry.id, ())) or "-",
                        f"{age(entry.created_at, now)} ago",
                    )
                ),
                id=f"q{entry.id}",
            )
            for entry in queue.entries
        ]
        parts.append(tag("h2", f"onto {queue.onto} ({len(queue.entries)}; {holder})"))
        heads = tag("tr", join(tag("th", c) for c in head))
        parts.append(tag("table", heads, join(rows), class_="queue"))
    parts.append(tag("h2", f"Recent landings ({len(recent)})"))
    if not recent:
        parts.append(tag("p", "none ended yet"))
        return join(parts)
    ended = ("#", "branch", "onto", "agent", "outcome", "ended", "commit or reason")
    rows = [
        tag(
            "tr",
            join(
                tag("td", c)
                for c in (
                    entry.id,
                    entry.branch,
                    entry.onto,
                    entry.agent,
                    entry.state,
                    f"{age(entry.updated_at, now)} ago",
                    (entry.commit or "-")[:12] if entry.state == "landed" else entry.reason or "-",
                )
            ),
            id=f"r{entry.id}",
        )
        for entry in recent
    ]
    table = tag("table", tag("tr", join(tag("th", c) for c in ended)), join(rows), id="recent")
    parts.append(table)
    return join(parts)

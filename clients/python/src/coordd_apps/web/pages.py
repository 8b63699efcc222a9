"""Every page, as HTML text: the frame, the board, a task, agents, reservations, the
post form and the confirmation every action passes through. Pure functions of what
was read; `app.py` reads and answers."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from coordd_apps import cost_view
from coordd_apps.web.markup import Html, join, tag, void
from coordd_apps.web.rows import View, board_table, gate_row, history_row, is_gate
from coordd_apps.wording import render
from coordd_apps.wording.advice import plural
from coordd_apps.wording.render import age
from coordd_client.presence import HORIZON
from coordd_client.text import parse_time
from coordd_wire.wire import STATES, AgentInfo, Event, Reservation, Task

NAV = (
    ("/", "board"),
    ("/messages", "messages"),
    ("/agents", "agents"),
    ("/reservations", "reservations"),
    ("/slots", "slots"),
    ("/landing", "landing queue"),
    ("/post", "post"),
)
#: The agents page's columns (the last: Release).
AGENT_COLUMNS = ("agent", "last seen", "holds", "reserved", "cost so far", "")


def frame(
    title: str,
    body: Html,
    *,
    scope: str,
    human: str,
    live: str | None = None,
    board: str | None = None,
) -> Html:
    """The page around `body`: head, navigation, the board's id (docs/PROTOCOL-1.2.md
    section 1b, the one every surface compares) and, on a page that follows the stream
    (`live`), the stream's badge: "connecting" until the stream says "live". A page
    with no stream has no badge, rather than one that never says anything (issue 47
    item 8)."""
    nav = join(tag("a", name, href=href) for href, name in NAV)
    head = Html(
        '<meta charset="utf-8"><meta name="viewport" content="width=device-width">'
        '<link rel="stylesheet" href="/static/web.css">'
        '<script src="/static/web.js" defer></script>'
    )
    header = tag(
        "header",
        tag("strong", "coord web"),
        tag("nav", nav),
        tag("span", f"{scope} · acting as {human}", class_="scope"),
        tag("span", f"board {board}", class_="board") if board else Html(""),
        tag("span", "connecting", id="status", class_="status", data_live=live)
        if live
        else Html(""),
    )
    return Html(
        "<!doctype html>"
        + tag(
            "html",
            tag("head", head, tag("title", title)),
            tag("body", header, tag("main", body)),
            lang="en",
        )
    )


def board(
    tasks: Sequence[Task],
    gates: Sequence[Task],
    view: View,
    now: datetime,
    *,
    csrf: str,
    last_seq: int,
    older: int = 0,
    costs: cost_view.Costs | None = None,
) -> Html:
    """Waiting for you at the top, the filter form, then the table: `tasks`, the newest
    that pass the filter, with `older` more that do but are not shown (the row cap).
    A capped board says so, and its script adds no row older than its oldest shown
    (`data-floor`): a change to one of those would otherwise pop it in."""
    waiting = tag(
        "section",
        tag("h2", f"Waiting for you ({len(gates)})"),
        tag("ul", Html("".join(gate_row(t, now, csrf) for t in gates)), id="gates"),
        id="waiting",
        class_="empty" if not gates else None,
    )
    boxes = join(
        tag(
            "label",
            void("input", type="checkbox", name="state", value=s, checked=s in view.states),
            s,
        )
        for s in STATES
    )
    form = tag(
        "form",
        boxes,
        void("input", type="search", name="q", value=view.text, placeholder="title contains"),
        void("input", type="text", name="kind", value=view.kind or "", placeholder="kind"),
        void(
            "input",
            type="text",
            name="agent",
            value=view.agent or "",
            placeholder="held by / assigned to",
        ),
        tag(
            "label",
            void("input", type="checkbox", name="ready", value="1", checked=view.ready),
            "ready only",
        ),
        tag("button", "filter", type="submit"),
        method="get",
        action="/",
        class_="filter",
    )
    more = (
        f"; {older:,} older ones too: narrow the filter (state, kind, title) to see them"
        if older
        else ""
    )
    count = tag(
        "p", f"{plural(len(tasks), 'task')} shown{more}", id="count", data_more=more or None
    )
    table = board_table(tasks, now, costs or cost_view.Costs())
    floor = str(tasks[0].id) if older and tasks else None
    return Html(
        waiting
        + form
        + count
        + tag(
            "div",
            table,
            id="board",
            data_seq=str(last_seq),
            data_view=view.query(),
            data_floor=floor,
        )
    )


def _fields(rows: Sequence[tuple[str, object]]) -> Html:
    return tag("dl", join(tag("dt", k) + tag("dd", v) for k, v in rows), class_="fields")


def _button_form(action: str, label: str, csrf: str, *extra: Html) -> Html:
    return tag(
        "form",
        void("input", type="hidden", name="csrf", value=csrf),
        *extra,
        tag("button", label, type="submit"),
        method="post",
        action=action,
    )


def task_page(
    task: Task,
    events: Sequence[Event],
    now: datetime,
    csrf: str,
    thread: Html | None = None,
    *,
    human: str | None = None,
    costs: cost_view.Costs | None = None,
) -> Html:
    """Body, result, the whole history, its thread (`message_pages.thread`), what it
    cost so far (`costs`, issue 48), and what the human can do with it now: a gate
    waiting for `human` is approved or rejected here too, as on the board's "Waiting
    for you" (each confirmed on a page that shows it)."""
    rows: list[tuple[str, object]] = [
        ("state", task.state),
        ("kind", task.kind),
        ("project", task.project),
        ("priority", task.priority),
        ("tags", ", ".join(task.tags) or "-"),
        ("posted", f"{age(task.created_at, now)} ago by {task.created_by or '-'}"),
        ("holder", task.claimed_by or "-"),
        ("assignee", task.assignee or "-"),
        ("lease ends", render.relative(task.lease_expires_at, now)),
        ("depends on", " ".join(f"#{i}" for i in task.depends_on) or "-"),
        ("blocked by", " ".join(f"#{i}" for i in task.blocked_by) or "-"),
        ("fence", task.fence),
        ("attempts", task.attempts),
    ]
    if costs is not None:
        rows.append(("cost so far", cost_view.task_words(costs, task.id)))
    body = tag("pre", task.body, class_="body") if task.body else tag("p", "(no body)")
    result = tag("pre", task.result, class_="result") if task.result is not None else Html("")
    history = tag(
        "table",
        tag("tr", join(tag("th", c) for c in ("seq", "at", "what", "by", "state", "note"))),
        join(history_row(e) for e in events),
        class_="history",
    )
    acts = [
        _button_form(
            f"/act/assign/{task.id}",
            "assign",
            csrf,
            void("input", type="text", name="assignee", placeholder="agent, human, or empty"),
        ),
        _button_form(f"/act/cancel/{task.id}", "cancel", csrf),
        _button_form(f"/act/reopen/{task.id}", "reopen", csrf),
    ]
    if human is not None and is_gate(task, human):
        why = void(
            "input",
            type="text",
            name="reason",
            placeholder="why (required to reject)",
            required=True,
            maxlength="1024",
        )
        acts = [
            _button_form(f"/act/approve/{task.id}", "approve", csrf),
            _button_form(f"/act/reject/{task.id}", "reject", csrf, why),
            *acts,
        ]
    exports = tag(
        "p",
        "export: ",
        tag("a", "Markdown", href=f"/task/{task.id}/export.md"),
        " · ",
        tag("a", "JSONL", href=f"/task/{task.id}/export.jsonl"),
    )
    return Html(
        tag("h1", f"#{task.id} {task.title}")
        + _fields(rows)
        + tag("h2", "Body")
        + body
        + (tag("h2", "Result") + result if result else Html(""))
        + tag("h2", "Act as the human")
        + tag("div", join(acts), class_="acts")
        + tag("h2", f"History ({plural(len(events), 'event')})")
        + history
        + exports
        + (thread or Html(""))
    )


def agents_page(
    agents: Sequence[AgentInfo],
    held: dict[str, list[Task]],
    reserved: dict[str, list[Reservation]],
    now: datetime,
    csrf: str,
    *,
    show_ended: bool = False,
    costs: cost_view.Costs | None = None,
) -> Html:
    """Last seen, what each holds and reserved, what its calls cost so far (`costs`,
    issue 48), and Release for one that holds something.

    An agent that holds nothing here and was not seen within `presence.HORIZON` has
    ended (its session closed, or it died holding nothing): such agents are hidden
    behind a "show ended (N)" link (`?ended=1`), since the daemon never forgets a
    name and every headless session would otherwise stay a row (issue 47 item 8)."""
    rows = []
    ended = 0
    for a in agents:
        claims = held.get(a.agent, [])
        patterns = reserved.get(a.agent, [])
        holds = bool(claims or patterns or a.holding)
        if not holds and now - parse_time(a.last_seen) >= HORIZON:
            ended += 1
            if not show_ended:
                continue
        release = (
            _button_form(f"/act/release-agent/{a.agent}", "release", csrf) if holds else Html("")
        )
        cells = (
            a.agent,
            f"{age(a.last_seen, now)} ago"
            if a.ended_at is None
            else f"gone (ended {age(a.ended_at, now)} ago)",
            " ".join(f"#{t.id}" for t in claims) or "-",
            ", ".join(r.pattern for r in patterns) or "-",
            cost_view.agent_words(costs or cost_view.Costs(), a.agent),
        )
        rows.append(
            tag("tr", join(tag("td", c) for c in cells), tag("td", release), id=f"a-{a.agent}")
        )
    head = tag("tr", join(tag("th", c) for c in AGENT_COLUMNS))
    if show_ended:
        toggle = tag("a", "hide ended", href="/agents", id="ended")
    else:
        toggle = tag("a", f"show ended ({ended})", href="/agents?ended=1", id="ended")
    note = tag(
        "p",
        f"{plural(len(rows), 'agent')} shown; ended: not seen for"
        f" {int(HORIZON.total_seconds() // 60)} minutes and holding nothing. ",
        toggle if ended else Html(""),
        class_="note",
    )
    return tag("h1", "Agents") + note + tag("table", head, join(rows), class_="agents")


def reservations_page(reservations: Sequence[Reservation], now: datetime) -> Html:
    head = ("pattern", "agent", "mode", "task", "expires", "reason")
    rows = [
        tag(
            "tr",
            join(
                tag("td", c)
                for c in (
                    r.pattern,
                    r.agent,
                    "exclusive" if r.exclusive else "shared",
                    f"#{r.task_id}" if r.task_id is not None else "-",
                    render.relative(r.expires_at, now),
                    r.reason or "",
                )
            ),
        )
        for r in reservations
    ]
    heads = tag("tr", join(tag("th", c) for c in head))
    table = tag("table", heads, join(rows), class_="reservations")
    return tag("h1", f"Reservations ({len(reservations)})") + table


def post_page(csrf: str) -> Html:
    def field(label: str, **attrs: object) -> Html:
        return tag("label", label, void("input", **attrs))

    form = tag(
        "form",
        void("input", type="hidden", name="csrf", value=csrf),
        field("title", type="text", name="title", required=True, maxlength="300"),
        tag("label", "body", tag("textarea", "", name="body", rows="6")),
        field("kind", type="text", name="kind", placeholder="task"),
        field("priority", type="number", name="priority", value="0"),
        field("assignee", type="text", name="assignee", placeholder="an agent, or human"),
        field("depends on", type="text", name="after", placeholder="ids, e.g. 3 7"),
        tag("button", "post…", type="submit"),
        method="post",
        action="/act/post",
        class_="post",
    )
    return tag("h1", "Post a task") + form


def confirm_page(
    question: str,
    action: str,
    fields: Sequence[tuple[str, str]],
    facts: Sequence[tuple[str, str]] = (),
) -> Html:
    """The step every action passes: the same form again, with `confirmed=yes`; an
    approval shows what it approves (`facts`: the gate's title, question and asker, a
    release request's paths, requester and reason) above the button that signs it."""
    shown = (
        tag("dl", join(tag("dt", name) + tag("dd", value) for name, value in facts), id="facts")
        if facts
        else Html("")
    )
    hidden = join(void("input", type="hidden", name=k, value=v) for k, v in fields)
    yes = tag(
        "form",
        hidden,
        void("input", type="hidden", name="confirmed", value="yes"),
        tag("button", "Yes, do it", type="submit", id="confirm"),
        method="post",
        action=action,
    )
    return (
        tag("h1", "Confirm")
        + tag("p", question, class_="question")
        + shown
        + yes
        + tag("p", tag("a", "No, go back", href="/"))
    )


def message_page(title: str, text: str, back: str = "/") -> Html:
    return (
        tag("h1", title) + tag("p", text, class_="message") + tag("p", tag("a", "back", href=back))
    )

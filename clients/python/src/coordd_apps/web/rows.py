"""A task as the board shows it (its row, and its line in "Waiting for you"), and the
board's filter read from the URL, so a view can be bookmarked and shared.

The same words as `coord top` (`render.py` and `board_filter.py`): the state
in a word (`blocked`, `lapsed`), the lease's countdown and the age. The countdown
and age cells carry their instant (`data-until`, `data-since`), and the page's
script ticks them, so a row is rendered once per change, not once per second.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlencode

from coordd_apps import cost_view
from coordd_apps.board_filter import Filter
from coordd_apps.web.markup import Html, esc, join, tag, void
from coordd_apps.wording.render import age, age_of, lease_left, relative, state_word
from coordd_wire.wire import STATES, Event, Task

COLUMNS = (
    "id", "state", "pri", "kind", "holder / assignee", "lease", "blocked by", "age", "cost",
    "title",
)  # fmt: skip


@dataclass(frozen=True)
class View:
    """The board's filter as the URL says it: `?state=pending&kind=bug&q=parser&ready=1`."""

    states: frozenset[str]
    kind: str | None = None
    text: str = ""
    ready: bool = False
    agent: str | None = None

    @classmethod
    def from_query(cls, query: Mapping[str, Sequence[str]]) -> View:
        states = frozenset(s for s in query.get("state", ()) if s in STATES)
        if "all" in query.get("state", ()):
            states = frozenset(STATES)

        def first(key: str) -> str:
            return (query.get(key) or [""])[0].strip()

        return cls(
            states=states or Filter().states,
            kind=first("kind") or None,
            text=first("q"),
            ready=first("ready") in ("1", "on", "true"),
            agent=first("agent") or None,
        )

    def filter(self) -> Filter:
        return Filter(
            states=self.states,
            kind=self.kind,
            text=self.text,
            ready_only=self.ready,
            mine=self.agent,
        )

    def query(self) -> str:
        """This view as a query string (the SSE stream is opened with it)."""
        pairs = [("state", s) for s in sorted(self.states)]
        pairs += [(k, v) for k, v in (("kind", self.kind), ("q", self.text)) if v]
        pairs += [("ready", "1")] if self.ready else []
        pairs += [("agent", self.agent)] if self.agent else []
        return urlencode(pairs)


def is_gate(task: Task, human: str) -> bool:
    """Waiting for the human: open work assigned to them (an approval gate)."""
    return task.assignee == human and task.state in ("pending", "claimed")


def who(task: Task) -> str:
    if task.claimed_by:
        return task.claimed_by
    return f"→ {task.assignee}" if task.assignee else "-"


def _ago(text: str, now: datetime) -> str:
    """`age`'s words, with `<1m` under a minute (the page's script says the same), so a
    cell changes once a minute at most. `fromisoformat` reads the daemon's times (RFC
    3339, `Z`) a dozen times faster than `strptime`, paid once per row."""
    seconds = (now - datetime.fromisoformat(text)).total_seconds()
    return "<1m" if seconds < 60 else age_of(seconds)


def cost_cell(costs: cost_view.Costs | None, task_id: int) -> str:
    """The tokens charged so far (a budget's mark from 80%: `!`, from 100%: `!!`) and
    the dollar estimate, labelled. `costs` None: not read with this row (a live event's
    row), so the page keeps the cell it shows (`data-keep`)."""
    if costs is None:
        return '<td class="cost" data-keep></td>'
    spent, budget = costs.tasks.get(task_id, 0), costs.budgets.get(task_id)
    text = cost_view.cell(spent, budget)
    usd = f' <span class="usd">{esc(cost_view.usd(costs.task_usd.get(task_id)))}</span>'
    mark = cost_view.level(spent, budget)
    return f'<td class="cost b{mark}">{esc(text)}{usd if spent else ""}</td>'


def task_row(task: Task, now: datetime, costs: cost_view.Costs | None = None) -> Html:
    """One board row; its id is `t<id>`, which the live script replaces in place;
    `costs` fills its cost cell (`cost_cell`).

    Written as one template rather than a `tag` per cell: a board of 10,000 rows is
    rendered whole on the first load. Every field an agent wrote goes through `esc`.
    """
    word = state_word(task, now)
    blocked = " ".join(f"#{i}" for i in task.blocked_by) or "-"
    if task.state == "claimed" and task.lease_expires_at:
        until = esc(task.lease_expires_at)
        lease = f'<td class="lease" data-until="{until}">{esc(lease_left(task, now))}</td>'
    else:
        lease = '<td class="lease"></td>'
    # The live script refreshes a row when one of its dependencies is done or reopened.
    deps = " ".join(str(i) for i in task.depends_on)
    since = esc(task.updated_at)
    return Html(
        f'<tr id="t{task.id}"' + (f' data-deps="{deps}"' if deps else "") + ">"
        f'<td class="num">{task.id}</td><td class="state s-{word}">{word}</td>'
        f'<td class="num">{task.priority}</td><td>{esc(task.kind)}</td>'
        f'<td class="who">{esc(who(task))}</td>{lease}<td>{blocked}</td>'
        f'<td class="age" data-since="{since}">{esc(_ago(task.updated_at, now))}</td>'
        + cost_cell(costs, task.id)
        + f'<td class="title"><a href="/task/{task.id}">{esc(task.title)}</a></td></tr>'
    )


def gate_row(task: Task, now: datetime, csrf: str) -> Html:
    """A gate's line: what it asks, who asked, and Approve / Reject (each confirmed)."""
    approve = tag(
        "form",
        void("input", type="hidden", name="csrf", value=csrf),
        tag("button", "Approve", type="submit", name="go", value="approve"),
        method="post",
        action=f"/act/approve/{task.id}",
    )
    reject = tag(
        "form",
        void("input", type="hidden", name="csrf", value=csrf),
        void(
            "input",
            type="text",
            name="reason",
            placeholder="why (required to reject)",
            required=True,
            maxlength="1024",
        ),
        tag("button", "Reject", type="submit", name="go", value="reject"),
        method="post",
        action=f"/act/reject/{task.id}",
    )
    asked = f"asked by {task.created_by or '-'} {age(task.created_at, now)} ago"
    return tag(
        "li",
        tag("a", f"#{task.id} {task.title}", href=f"/task/{task.id}"),
        tag("span", asked, class_="asked"),
        tag("span", approve, reject, class_="gate-actions"),
        id=f"g{task.id}",
    )


def board_table(tasks: Sequence[Task], now: datetime, costs: cost_view.Costs | None = None) -> Html:
    head = tag("tr", join(tag("th", c) for c in COLUMNS))
    body = Html("".join(task_row(t, now, costs) for t in tasks))
    return tag("table", tag("thead", head), tag("tbody", body, id="rows"), class_="board")


def history_row(event: Event) -> Html:
    """One step of a task's history on its page: seq, when, what, by whom, the state
    it left, and the outcome or whose claim was released."""
    task = event.task
    assert task is not None, event.type  # a history asked with no `types` is task events
    note = (
        task.result if event.type in ("task.completed", "task.failed", "task.cancelled") else None
    )
    if event.of is not None:
        note = f"released {event.of}'s" + (f": {event.reason}" if event.reason else "")
    cells = (
        event.seq,
        event.type.removeprefix("task."),
        event.agent or "-",
        task.state,
        note or "",
    )
    # When, as every surface says a time (`3 min ago (07:18Z)`, as `coord show --history`
    # does); the exact instant is the cell's title.
    at = tag("td", relative(event.at), title=event.at)
    tds = [tag("td", c) for c in cells]
    return tag("tr", join([tds[0], at, *tds[1:]]))

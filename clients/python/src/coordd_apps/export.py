"""`coord export`: the event log as an audit trail, streamed so a large log never sits
in memory: JSONL for tools (each line one event exactly as `events.since` sent it,
every type named, so the 1.2 events with no task are in it too: edits, messages,
slots, landings), or Markdown for people (one section per task: who posted,
claimed, released, completed or failed it, when, with its body, result and the
messages on its thread; then "Board events", every event with no task in order:
landings, slot and port grants, messages and release requests and their answers
off a task's thread, file edits).

The Markdown is written to be read raw as much as rendered: names, paths and
branches are code spans (never escaped inside), and other people's text is
escaped only where Markdown would act on it (issue 47 item 9: every name
was escaped, `root\\-session\\-7632`).

Memory is bounded by one page: JSONL holds one page of events (1,000); Markdown
(`export_markdown`, built from the pieces here) one page of events, then of tasks,
with the rendered lines between the two on disk. The pure pieces (`task_section`,
`jsonl_line`, `in_range`) are shared with `coord web`'s per-task export.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Any

import msgspec

from coordd_apps.markdown_text import code as _code
from coordd_apps.markdown_text import fenced as _fenced
from coordd_apps.markdown_text import text as _md
from coordd_apps.wording.render import budget_words, usage_words
from coordd_client import methods
from coordd_client.client import Client
from coordd_client.paging import EVENT_PAGE, TASK_PAGE
from coordd_client.text import clean_block, parse_time
from coordd_wire.wire import (
    Event,
    EventsResult,
    Task,
    served_event_types,
)
from coordd_wire.wire_messages import MessageEvent, RequestState


class _RawPage(msgspec.Struct):
    events: list[msgspec.Raw]
    last_seq: int


class _Stamp(msgspec.Struct):
    """What a range check reads of a raw event: nothing else is decoded."""

    seq: int
    at: str


_stamp = msgspec.json.Decoder(_Stamp)


@dataclass(frozen=True)
class Range:
    """A time range, each end optional and inclusive."""

    since: datetime | None = None
    until: datetime | None = None

    def admits(self, at: str) -> bool:
        if self.since is None and self.until is None:
            return True  # no instant to parse: a whole log's export reads every event
        moment = parse_time(at)
        return (self.since is None or moment >= self.since) and (
            self.until is None or moment <= self.until
        )


def parse_moment(text: str) -> datetime:
    """`2026-12-01`, `2026-12-01T10:00Z` or any ISO 8601 instant; naive means UTC."""
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def in_range(events: Iterable[Event], span: Range) -> list[Event]:
    return [e for e in events if span.admits(e.at)]


def jsonl_line(event: Event | msgspec.Raw) -> bytes:
    if isinstance(event, msgspec.Raw):
        return bytes(event) + b"\n"
    return msgspec.json.encode(event) + b"\n"


def raw_events(
    client: Client,
    *,
    project: str | None = None,
    task_id: int | None = None,
    types: Sequence[str] | None = None,
) -> Iterator[msgspec.Raw]:
    """Every stored event from seq 0 (of `types`, else of every type the daemon serves),
    one page in memory at a time, as the daemon sent it."""
    if types is None:
        types = served_event_types(client.server_info().features)
    after = 0
    while True:
        # Every type named: with `types` omitted a daemon sends only task events.
        since = methods.events_since(
            after_seq=after,
            limit=EVENT_PAGE,
            types=list(types),
            project=project or None,
            task_id=task_id or None,
        )
        page = client.send(since.as_type(_RawPage))
        yield from page.events
        if len(page.events) < EVENT_PAGE:
            return
        after = page.last_seq


def write_jsonl(
    client: Client, out: IO[bytes], *, project: str | None, task_id: int | None, span: Range
) -> int:
    """The log as JSONL; the number of lines written."""
    written = 0
    ranged = span.since is not None or span.until is not None
    for raw in raw_events(client, project=project, task_id=task_id):
        if ranged and not span.admits(_stamp.decode(raw).at):
            continue
        out.write(jsonl_line(raw))
        written += 1
    return written


def task_step(event: Event) -> str:
    task = event.task
    assert task is not None, event.type  # the export asks with no `types`: task events
    what = event.type.removeprefix("task.")
    line = f"- {event.at} **{what}** by {_code(event.agent or '-')} (seq {event.seq})"
    if event.type == "task.claimed":
        line += f", fence {task.fence}"
    if event.type == "task.assigned":
        line += f", to {_code(task.assignee) if task.assignee else 'nobody'}"
    if event.of is not None:
        line += f", releasing {_code(event.of)}'s hold"
    if event.reason:
        line += f": {_md(event.reason)}"
    if event.type in ("task.completed", "task.failed", "task.cancelled") and task.result:
        line += f": {_md(task.result.splitlines()[0][:200])}"
    return line


#: A message body longer than this (or of several lines) is shown whole in a fence.
MESSAGE_LINE_CHARS = 200


def message_step(event: MessageEvent) -> str:
    message = event.message
    what = {"question": "question", "answer": "answer", "request": "release request"}.get(
        message.kind, "message"
    )
    line = f"- {event.at} **{what}** #{message.id} from {_code(message.sender)}"
    if message.to:
        line += f" to {_code(message.to)}"
    line += f" (seq {event.seq})"
    if message.reply_to is not None:
        line += f", replying to #{message.reply_to}"
    if message.request is not None:
        line += ", " + _request_words(message.request)
    lines = message.body.splitlines() if message.body else []
    first = lines[0] if lines else ""
    if len(lines) <= 1 and len(first) <= MESSAGE_LINE_CHARS:
        return line + (f": {_md(first)}" if first else "")
    # A longer body is not cut off in the audit trail: its first line, marked cut, and
    # the whole of it in a fence under the item (indented, so the list goes on).
    shown = first[:MESSAGE_LINE_CHARS] + "…"
    block = _fenced(clean_block(message.body)).replace("\n", "\n  ")
    return f"{line}: {_md(shown)}\n\n  {block}\n"


def _request_words(request: RequestState) -> str:
    """What a release request asks of whom, and where it stands, in a few words."""
    asked = (
        ", ".join(_code(p) for p in request.patterns)
        if request.patterns
        else f"task #{request.task_id}"
    )
    words = f"asking {_code(request.holder)} for {asked} ({request.status}"
    if request.granted:
        words += ": handed over " + ", ".join(_code(p) for p in request.granted)
    return words + ")"


def board_step(event: Event) -> str:
    """One event with no task (slots, ports, landings, file edits) as a Markdown line."""
    line = f"- {event.at} **{event.type}**"
    if event.slot is not None:
        lease = event.slot
        held = f"port {lease.port} " if lease.port is not None else ""
        line += f" {held}{_code(lease.name)}"
        line += f" {'to' if event.type == 'slot.granted' else 'of'} {_code(lease.agent)}"
        line += f", fence {lease.fence}"
        if lease.task_id is not None:
            line += f", task #{lease.task_id}"
    elif event.landing is not None:
        landing = event.landing
        line += f" #{landing.id} {_code(landing.branch)} onto {_code(landing.onto)}"
        line += f" by {_code(landing.agent)}"
        if landing.task_id is not None:
            line += f", task #{landing.task_id}"
        if landing.commit:
            line += f", at {_code(landing.commit[:12])}"
    elif event.usage is not None:
        line += f" {_md(usage_words(event.usage))} by {_code(event.agent or '-')}"
    elif event.budget is not None:
        line += f" {_md(budget_words(event.budget))}"
    elif event.paths is not None:
        line += " " + ", ".join(_code(p) for p in event.paths)
        if event.worktree:
            line += f" in {_code(event.worktree)}"
        line += f" by {_code(event.agent or '-')}"
    line += f" (seq {event.seq})"
    reason = event.reason or (event.landing.reason if event.landing else None)
    return line + (f": {_md(reason)}" if reason else "")


def task_section(
    task: Task,
    events: Sequence[Event],
    messages: Sequence[MessageEvent] = (),
    cost: str | None = None,
    budget_events: Sequence[Event] = (),
) -> str:
    """One task as Markdown: heading, facts (with what it cost, from the token ledger,
    issue 48), body, the history in order (with the messages on its thread), the result."""
    steps = sorted(
        [(e.seq, task_step(e)) for e in events]
        + [(m.seq, message_step(m)) for m in messages]
        + [(e.seq, board_step(e)) for e in budget_events]  # its budget's crossings
    )
    return section_text(task, [text for _, text in steps], cost)


def section_text(task: Task, steps: Sequence[str], cost: str | None = None) -> str:
    """One task's section from its history lines, already in log order (`task_section`)."""
    lines = [
        f"## #{task.id} {_md(task.title)}",
        "",
        f"- state: {task.state}; kind: {_code(task.kind)}; priority: {task.priority}",
        f"- project: {_code(task.project)}",
        f"- posted by {_code(task.created_by or '-')} at {task.created_at}",
    ]
    if task.assignee:
        lines.append(f"- assigned to {_code(task.assignee)}")
    if task.depends_on:
        lines.append("- depends on " + ", ".join(f"#{i}" for i in task.depends_on))
    if cost:
        lines.append(f"- cost: {cost}")
    if task.body:
        lines += ["", _fenced(clean_block(task.body))]
    lines += ["", "### History", ""]
    lines += list(steps) or ["- (no events in this range)"]
    if task.result is not None:
        lines += ["", "### Result", "", _fenced(clean_block(task.result))]
    return "\n".join(lines) + "\n\n"


def every_task(client: Client, *, project: str | None) -> Iterator[Task]:
    """Every task of `project` (None: of every project) in id order, a page at a time."""
    after: int | None = None
    states = ["pending", "claimed", "done", "failed", "cancelled"]
    while True:
        page = client.list_tasks(project=project, state=states, after_id=after, limit=TASK_PAGE)
        yield from page.tasks
        if page.next_after_id is None:
            return
        after = page.next_after_id


class _MessagePage(msgspec.Struct):
    events: list[MessageEvent]
    last_seq: int


def _task_events(client: Client, task_id: int, event_type: str, page: type[Any]) -> list[Any]:
    """Every `event_type` event of one task, a page (`page`'s Struct) at a time."""
    found: list[Any] = []
    after = 0
    while True:
        since = methods.events_since(
            after_seq=after, limit=EVENT_PAGE, task_id=task_id, types=[event_type]
        )
        answer = client.send(since.as_type(page))
        found += answer.events
        if len(answer.events) < EVENT_PAGE:
            return found
        after = answer.last_seq


def budget_crossings(client: Client, task_id: int) -> list[Event]:
    """The `usage.budget` events of one task (issue 48); none from an older daemon."""
    if not client.supports("token_ledger"):
        return []
    return _task_events(client, task_id, "usage.budget", EventsResult)


def thread(client: Client, task_id: int) -> list[MessageEvent]:
    """The messages on one task's thread (1.2 section 12); none from an older daemon."""
    if not client.supports("messages"):
        return []
    return _task_events(client, task_id, "message.sent", _MessagePage)

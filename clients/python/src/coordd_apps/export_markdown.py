"""`coord export`'s Markdown: one section per task, then "Board events", from one read of
the event log.

Each task's history is spread over the whole log, while its section is written in id
order; asking the daemon for each task's history, thread and budget crossings would be
three calls a task (149 s for a board of 100,000 tasks, against 5.6 s for the JSONL's
single pass). So the log is read once, as the JSONL reads it (`events.since` pages,
every type named), and each event is rendered to its line as it arrives and put aside
under its task in a temporary SQLite file; the tasks are then paged in id order and
each section built from its lines. Memory stays bounded by a page, as the JSONL's: the
lines wait on disk, not in this process.

A message on a task's thread may be sent from another project than the task's: with a
project named, the one pass sees that project's events only, so a second pass over
`message.sent` alone (the few messages, not the log) fetches the ones from elsewhere,
as the per-task thread read would have.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

import msgspec

from coordd_apps.cost_report import task_costs
from coordd_apps.export import (
    Range,
    board_step,
    budget_crossings,
    every_task,
    in_range,
    message_step,
    raw_events,
    section_text,
    task_section,
    task_step,
    thread,
)
from coordd_apps.markdown_text import code
from coordd_client.client import Client
from coordd_client.paging import TASK_PAGE, task_history
from coordd_wire.wire import FEATURE_OF_EVENT, Event, Task, served_event_types
from coordd_wire.wire_messages import MessageEvent

MESSAGE_SENT = "message.sent"
#: Lines put aside per INSERT.
_BATCH = 1000


_event = msgspec.json.Decoder(Event)
_message_event = msgspec.json.Decoder(MessageEvent)


class _Lines:
    """Rendered lines on disk: each task's history, and the board's, in log order."""

    def __init__(self, directory: Path) -> None:
        self._db = sqlite3.connect(directory / "lines.db", isolation_level=None)
        self._db.execute("PRAGMA journal_mode = OFF")
        self._db.execute("PRAGMA synchronous = OFF")
        self._db.execute("CREATE TABLE lines (task INTEGER NOT NULL, seq INTEGER, line TEXT)")
        self._pending: list[tuple[int, int, str]] = []

    def add(self, task: int, seq: int, line: str) -> None:
        """`task` 0: a board event's line."""
        self._pending.append((task, seq, line))
        if len(self._pending) >= _BATCH:
            self._flush()

    def _flush(self) -> None:
        self._db.execute("BEGIN")
        self._db.executemany("INSERT INTO lines VALUES (?, ?, ?)", self._pending)
        self._db.execute("COMMIT")
        self._pending.clear()

    def done(self) -> None:
        """Every line is in: index them for the reads by task."""
        if self._pending:
            self._flush()
        self._db.execute("CREATE INDEX lines_task ON lines (task, seq)")

    def of(self, task: int) -> list[str]:
        rows = self._db.execute("SELECT line FROM lines WHERE task = ? ORDER BY seq", (task,))
        return [line for (line,) in rows]

    def between(self, first: int, last: int) -> dict[int, list[str]]:
        """The lines of the tasks `first` to `last`, by task: one read for a page."""
        found: dict[int, list[str]] = {}
        rows = self._db.execute(
            "SELECT task, line FROM lines WHERE task BETWEEN ? AND ? ORDER BY task, seq",
            (first, last),
        )
        for task, line in rows:
            found.setdefault(task, []).append(line)
        return found

    def close(self) -> None:
        self._db.close()


def _read_log(client: Client, lines: _Lines, *, project: str | None, span: Range) -> None:
    """The one pass: every event in `span` rendered, under its task (0: the board's)."""
    for raw in raw_events(client, project=project):
        event = _event.decode(raw)  # a message's too: its `message` member is partial
        if not span.admits(event.at):
            continue
        if event.type == MESSAGE_SENT:
            sent = _message_event.decode(raw)
            lines.add(sent.message.task_id or 0, sent.seq, message_step(sent))
        elif event.type in FEATURE_OF_EVENT:
            if event.type == "usage.budget":  # in its task's history (issue 48)
                if event.task_id is not None:
                    lines.add(event.task_id, event.seq, board_step(event))
                continue
            lines.add(0, event.seq, board_step(event))
        else:
            assert event.task_id is not None, event.type
            lines.add(event.task_id, event.seq, task_step(event))
    if project is None or MESSAGE_SENT not in served_event_types(client.server_info().features):
        return
    for raw in raw_events(client, types=[MESSAGE_SENT]):
        sent = _message_event.decode(raw)
        message = sent.message
        if message.task_id is not None and message.project != project and span.admits(sent.at):
            lines.add(message.task_id, sent.seq, message_step(sent))


def write_markdown(
    client: Client, out: IO[bytes], *, project: str | None, task_id: int | None, span: Range
) -> int:
    """One section per task (in id order) with an event in `span`; the sections written."""
    scope = (
        f"task #{task_id}"
        if task_id
        else (f"project {code(project)}" if project else "every project")
    )
    ends = f"from {span.since.isoformat() if span.since else 'the start'} to "
    ends += span.until.isoformat() if span.until else "now"
    out.write(f"# coord audit trail: {scope}\n\n{ends}\n\n".encode())
    costs = task_costs(client, project=project, task_id=task_id)  # issue 48
    ranged = span.since is not None or span.until is not None
    if task_id is not None:
        return _write_one(client, out, task_id, costs.get(task_id), span)
    with tempfile.TemporaryDirectory(prefix="coord-export-") as directory:
        lines = _Lines(Path(directory))
        try:
            _read_log(client, lines, project=project, span=span)
            lines.done()
            written = 0
            for page in _pages(every_task(client, project=project)):
                steps = lines.between(page[0].id, page[-1].id)
                for task in page:
                    if task.id not in steps and ranged:
                        continue
                    section = section_text(task, steps.get(task.id, []), costs.get(task.id))
                    out.write(section.encode())
                    written += 1
            _write_board_lines(out, lines.of(0))
        finally:
            lines.close()
    return written


def _pages(tasks: Iterable[Task]) -> Iterator[list[Task]]:
    """`tasks` (in id order) a page at a time."""
    page: list[Task] = []
    for task in tasks:
        page.append(task)
        if len(page) == TASK_PAGE:
            yield page
            page = []
    if page:
        yield page


def _write_one(client: Client, out: IO[bytes], task_id: int, cost: str | None, span: Range) -> int:
    """One task's section, from its own history (a walk of its chain: no pass over the log)."""
    task = client.get(task_id).task
    events = in_range(task_history(client, task_id), span)
    messages = [m for m in thread(client, task_id) if span.admits(m.at)]
    crossings = in_range(budget_crossings(client, task_id), span)
    if not events and not messages and not crossings and (span.since or span.until):
        return 0
    out.write(task_section(task, events, messages, cost, crossings).encode())
    return 1


def _write_board_lines(out: IO[bytes], lines: Iterable[str]) -> None:
    """Every event with no task, in order, under one heading (none: no heading).

    A message on a task's thread is in that task's section already, so it is not
    here; a request, an answer or a message to an agent or a project is.
    """
    heading = (
        "## Board events\n\n"
        "Landings, slots and ports, messages off a task's thread, file edits.\n\n"
    )
    for line in lines:
        out.write((heading + line + "\n").encode())
        heading = ""
    if not heading:
        out.write(b"\n")

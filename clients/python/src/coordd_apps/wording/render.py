"""Human output for `coord`: compact, aligned, plain words, readable by a model.

Full ids, state names spelled out, times both relative and absolute; colour
only when stdout is a terminal.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from coordd_apps.wording.advice import reason_text, when
from coordd_client import acks
from coordd_client.text import clean, clean_block, parse_time
from coordd_wire.wire import BudgetCrossing, CompleteResult, Event, Reservation, Task, UsageRef

_COLOURS = {"pending": "33", "claimed": "36", "done": "32", "failed": "31", "cancelled": "90"}


def relative(text: str | None, now: datetime | None = None) -> str:
    """`3 min ago (14:02Z)` or `in 9 min (14:15Z)`: `advice.when`, every surface's one
    way of saying a time."""
    if not text:
        return "-"
    return when(text, None if now is None else now.timestamp())


def _coloured(state: str, text: str) -> str:
    """`text` in the state's colour on a terminal; as it is anywhere else."""
    if sys.stdout.isatty():
        return f"\x1b[{_COLOURS.get(state, '0')}m{text}\x1b[0m"
    return text


def one_line(task: Task) -> str:
    """`#42 [bug, pending] Parser crashes on empty input`."""
    return f"#{task.id} [{task.kind}, {task.state}] {clean(task.title)}"


def task_table(
    tasks: Sequence[Task], *, with_project: bool = False, elsewhere: Mapping[int, str] | None = None
) -> str:
    """An aligned table, one task a row; `with_project` adds the project column, and
    the assignee and blocked-by columns appear when any row has one. A blocker of
    another project (`elsewhere`: id -> project) shows as `#1@<its folder name>`."""
    others = elsewhere or {}

    def blocker(i: int) -> str:
        return (
            f"#{i}@{clean(os.path.basename(others[i].rstrip('/')) or others[i])}"
            if i in others
            else f"#{i}"
        )

    if not tasks:
        return "no tasks"
    columns: list[tuple[str, Callable[[Task], str], bool]] = [
        ("ID", lambda t: str(t.id), True),
        ("STATE", lambda t: t.state, False),
        ("PRI", lambda t: str(t.priority), True),
    ]
    if with_project:
        columns.append(("PROJECT", lambda t: clean(t.project), False))
    columns += [
        ("KIND", lambda t: t.kind, False),
        ("HOLDER", lambda t: clean(t.claimed_by or "-"), False),
    ]
    if any(t.assignee for t in tasks):
        columns.append(("ASSIGNEE", lambda t: clean(t.assignee or "-"), False))
    if any(t.blocked_by for t in tasks):
        columns.append(
            ("BLOCKED BY", lambda t: ",".join(blocker(i) for i in t.blocked_by) or "-", False)
        )
    columns.append(("UPDATED", lambda t: relative(t.updated_at), False))
    cells = [[value(t) for _, value, _ in columns] for t in tasks]
    widths = [
        max(len(head), *(len(row[n]) for row in cells)) for n, (head, _, _) in enumerate(columns)
    ]

    def line(values: list[str], state: str | None = None) -> str:
        out = []
        for n, (head, _, right) in enumerate(columns):
            text = values[n].rjust(widths[n]) if right else values[n].ljust(widths[n])
            if head == "STATE" and state is not None:
                text = _coloured(state, text)
            out.append(text)
        return "  ".join(out)

    lines = [line([head for head, _, _ in columns]) + "  TITLE"]
    for task, row in zip(tasks, cells, strict=True):
        lines.append(line(row, task.state) + f"  {clean(task.title)}")
    return "\n".join(lines)


def task_detail(task: Task) -> str:
    rows = [
        ("id", str(task.id)),
        ("title", clean(task.title)),
        ("state", task.state),
        ("kind", clean(task.kind)),
        ("project", clean(task.project)),
        ("priority", str(task.priority)),
        ("tags", clean(", ".join(task.tags)) or "-"),
        ("created", f"{relative(task.created_at)} by {clean(task.created_by or '-')}"),
        ("updated", relative(task.updated_at)),
        ("holder", clean(task.claimed_by or "-")),
        ("assignee", clean(task.assignee or "-")),
        ("depends on", ", ".join(f"#{i}" for i in task.depends_on) or "-"),
        ("blocked by", ", ".join(f"#{i}" for i in task.blocked_by) or "-"),
        ("claimed", relative(task.claimed_at)),
        ("lease ends", relative(task.lease_expires_at)),
        ("fence", str(task.fence)),
        ("attempts", str(task.attempts)),
        ("result", clean(task.result) if task.result is not None else "-"),
    ]
    text = "\n".join(f"{name + ':':<12} {value}" for name, value in rows)
    if task.body:
        text += "\n\n" + clean_block(task.body)
    return text


def history_line(event: Event) -> str:
    """One step of a task's history: when, what, who, and the outcome it left."""
    if event.task is None:  # an event with no task (1.2: edits, messages, slots, landings)
        return f"{event.seq:>6}  {relative(event.at):<22}  {event.type}  {subject(event)}"
    outcome = ""
    if event.type in ("task.completed", "task.failed", "task.cancelled") and event.task.result:
        outcome = f": {clean(event.task.result)}"
    if event.of is not None:  # 1.2 agent.release: whose it was, and why
        outcome += f"  (released {clean(event.of)}'s"
        outcome += f": {clean(event.reason)})" if event.reason else ")"
    return (
        f"{event.seq:>6}  {relative(event.at):<22}  {event.type.removeprefix('task.'):<9}"
        f"  by {clean(event.agent or '-'):<20}  -> {event.task.state}{outcome}"
    )


def event_line(event: Event) -> str:
    if event.task is None:  # a slot or landing event (issue 35)
        return (
            f"{event.seq:>6}  {relative(event.at):<22}  {event.type:<15}  {'':<6} "
            f" {clean(event.agent or '-'):<14}  {clean(subject(event))}"
        )
    return (
        f"{event.seq:>6}  {relative(event.at):<22}  {event.type:<15}  #{event.task_id:<5} "
        f" {clean(event.agent or '-'):<14}  {event.task.state:<9}  {clean(event.task.title)}"
    )


def reservation_line(r: Reservation) -> str:
    """Who holds which pattern, how, until when, for which task: one line."""
    mode = "exclusive" if r.exclusive else "shared"
    task = f" for #{r.task_id}" if r.task_id is not None else ""
    reason = f" ({clean(reason_text(r.reason))})" if r.reason else ""
    return (
        f"{clean(r.pattern)} held by {clean(r.agent)}, {mode}{task}, expires"
        f" {relative(r.expires_at)}{reason}"
    )


def reservation_table(reservations: Sequence[Reservation], *, with_project: bool = False) -> str:
    """An aligned table, one reservation a row."""
    if not reservations:
        return "no reservations"
    head = ["ID", "AGENT", "MODE", "TASK", "EXPIRES"]
    if with_project:
        head.insert(1, "PROJECT")
    rows = []
    for r in reservations:
        row = [
            str(r.id),
            clean(r.agent),
            "excl" if r.exclusive else "shared",
            f"#{r.task_id}" if r.task_id is not None else "-",
            relative(r.expires_at),
        ]
        if with_project:
            row.insert(1, clean(r.project))
        rows.append(row)
    widths = [max(len(h), *(len(row[n]) for row in rows)) for n, h in enumerate(head)]

    def line(values: list[str]) -> str:
        return "  ".join(v.ljust(w) for v, w in zip(values, widths, strict=True))

    lines = [line(head) + "  PATTERN"]
    for r, row in zip(reservations, rows, strict=True):
        reason = f"  ({clean(reason_text(r.reason))})" if r.reason else ""
        lines.append(line(row) + f"  {clean(r.pattern)}{reason}")
    return "\n".join(lines)


def subject(event: Event) -> str:
    """What an event with no task is about, in a few words (a task event: '')."""
    if event.slot is not None:
        lease = event.slot
        held = f"port {lease.port}" if lease.port is not None else "slot"
        why = f" ({event.reason})" if event.reason else ""
        return f"{held} {lease.name}{why}"
    if event.landing is not None:
        return f"{event.landing.branch} -> {event.landing.onto}"
    if event.message is not None:
        note = event.message
        to = f" to {note.to}" if note.to else ""
        first = note.body.splitlines()[0][:120] if note.body else ""
        return f"{note.kind} #{note.id} from {note.sender}{to}: {first}"
    if event.paths is not None:
        where = f" in {event.worktree}" if event.worktree else ""
        return ", ".join(event.paths[:3]) + (" ..." if len(event.paths) > 3 else "") + where
    if event.usage is not None:
        return usage_words(event.usage)
    if event.budget is not None:
        return budget_words(event.budget)
    return ""


def budget_words(crossing: BudgetCrossing) -> str:
    """A `usage.budget` event: which task, how far past which threshold."""
    words = (
        f"#{crossing.task_id} reached {crossing.threshold}% of its token budget"
        f" ({crossing.spent:,} of {crossing.tokens:,})"
    )
    return words + (", claim released" if crossing.released else "")


def usage_words(usage: UsageRef) -> str:
    """A `usage.reported` event: how many model calls, how many tokens, charged to what."""
    charged = ", ".join("unattributed" if t is None else f"#{t}" for t in usage.task_ids)
    calls = "call" if usage.recorded == 1 else "calls"
    return f"{usage.recorded} {usage.host} model {calls}, {usage.tokens:,} tokens -> {charged}"


def state_word(task: Task, now: datetime) -> str:
    """The state in a word, as colour alone must not carry it: blocked, lapsed, ..."""
    if task.state == "pending" and task.blocked_by:
        return "blocked"
    if (
        task.state == "claimed"
        and task.lease_expires_at
        and parse_time(task.lease_expires_at) <= now
    ):
        return "lapsed"
    return task.state


def lease_left(task: Task, now: datetime) -> str:
    if task.state != "claimed" or not task.lease_expires_at:
        return ""
    seconds = int((parse_time(task.lease_expires_at) - now).total_seconds())
    if seconds <= 0:
        return "lapsed"
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes}:{seconds:02d}" if minutes < 100 else f"{minutes // 60}h"


def age(text: str, now: datetime) -> str:
    return age_of((now - parse_time(text)).total_seconds())


def age_of(seconds: float) -> str:
    """`38s`, `4m`, `2h`, `3d`: the largest whole unit."""
    seconds = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def completion(result: CompleteResult, *, asked_result: str | None, asked_ack: str | None) -> str:
    """What `coord done` says of a completion. A repeat (the task was done already, by this agent)
    returns the first call's outcome (`acks.completion_repeated`), so a result or an ack
    that differs from what this call asked for was not recorded now: said so, rather
    than 'posted ack #9' for an ack posted by the first call."""
    task, posted = result.task, result.posted
    if acks.completion_repeated(
        task.result,
        None if posted is None else posted.title,
        asked_result=asked_result,
        asked_ack=asked_ack,
    ):
        lines = [f"#{task.id} was done already: {clean(task.title)}"]
        lines.append(f"its result stays: {clean(task.result or '(none)')}")
        if posted is not None:
            lines.append(f"its ack, posted then: #{posted.id}: {clean(posted.title)}")
        lines.append("nothing of this call was recorded (`coord reopen ID` to redo it)")
        return "\n".join(lines)
    words = f"done #{task.id}: {clean(task.title)}"
    if posted is not None:
        words += f"\nposted ack #{posted.id}: {clean(posted.title)}"
    return words

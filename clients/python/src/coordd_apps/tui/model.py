"""The board as `coord top` holds it: tasks by id, kept current by events, and the rows
a filter selects. No Textual here, so it is tested (and reasoned about) on its own.

A dependent's `blocked_by` is kept here too. The daemon appends `task.unblocked`
only when a task's *last* open dependency is done (PROTOCOL.md section 9), so a
dependent of #8 and #9 gets no event when #9 alone is done; the model takes #9 out
of its `blocked_by` itself (and puts it back when #9 is reopened), from the event
that changed #9. A later event about the dependent, in seq order, says the same.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field

import msgspec

from coordd_apps.wording.render import subject
from coordd_client.text import clean, parse_time
from coordd_wire.wire import Event, Task

#: The feed keeps this many recent events.
FEED_SIZE = 500


@dataclass
class BoardModel:
    tasks: dict[int, Task] = field(default_factory=dict)
    feed: deque[Event] = field(default_factory=lambda: deque(maxlen=FEED_SIZE))
    last_seq: int = 0
    #: Kept as events arrive, so neither the footer nor the countdown walks every task.
    state_counts: Counter[str] = field(default_factory=Counter)
    claimed: set[int] = field(default_factory=set)
    #: The reverse of `depends_on` (fixed at post): the tasks that wait for each id.
    dependents: dict[int, set[int]] = field(default_factory=dict)
    #: `updated_at` as a POSIX time, parsed once per change, for the AGE tick.
    updated: dict[int, float] = field(default_factory=dict)

    def load(self, tasks: list[Task], last_seq: int) -> None:
        self.tasks = {t.id: t for t in tasks}
        self.last_seq = last_seq
        self.state_counts = Counter(t.state for t in tasks)
        self.claimed = {t.id for t in tasks if t.state == "claimed"}
        self.dependents = {}
        for task in tasks:
            self._index(task)
        self.updated = {t.id: parse_time(t.updated_at).timestamp() for t in tasks}

    def _index(self, task: Task) -> None:
        for dependency in task.depends_on:
            self.dependents.setdefault(dependency, set()).add(task.id)

    def apply(self, events: list[Event]) -> set[int]:
        """Apply events in seq order; the ids of the tasks that changed."""
        changed: set[int] = set()
        for event in events:
            if event.seq <= self.last_seq:
                continue  # seen already (a resume replays from the last seq)
            self.last_seq = event.seq
            if event.task is None or event.task_id is None:
                self.feed.append(event)  # a slot or landing event (issue 35)
                continue
            old = self.tasks.get(event.task_id)
            if old is not None:
                self.state_counts[old.state] -= 1
            self.state_counts[event.task.state] += 1
            if event.task.state == "claimed":
                self.claimed.add(event.task_id)
            else:
                self.claimed.discard(event.task_id)
            self.tasks[event.task_id] = event.task
            self.updated[event.task_id] = parse_time(event.task.updated_at).timestamp()
            if old is None:
                self._index(event.task)
            was_done = old is not None and old.state == "done"
            if was_done != (event.task.state == "done"):
                changed |= self._redepend(event.task_id, done=not was_done)
            self.feed.append(event)
            changed.add(event.task_id)
        return changed

    def _redepend(self, task_id: int, *, done: bool) -> set[int]:
        """`task_id` became done (or stopped being done): its dependents' `blocked_by`."""
        changed: set[int] = set()
        for dependent_id in self.dependents.get(task_id, ()):
            dependent = self.tasks.get(dependent_id)
            if dependent is None:
                continue
            blocked = set(dependent.blocked_by)
            if done:
                blocked.discard(task_id)
            else:
                blocked.add(task_id)
            if blocked != set(dependent.blocked_by):
                self.tasks[dependent_id] = msgspec.structs.replace(
                    dependent, blocked_by=sorted(blocked)
                )
                changed.add(dependent_id)
        return changed

    def counts(self) -> Counter[str]:
        return self.state_counts

    def holdings(self) -> dict[str, list[int]]:
        held: dict[str, list[int]] = {}
        for task_id in sorted(self.claimed):
            holder = self.tasks[task_id].claimed_by
            if holder:
                held.setdefault(holder, []).append(task_id)
        return held


def feed_line(event: Event) -> str:
    """One event in the feed, stamped with its clock time: a relative `3s ago` written
    once into a log would be wrong a minute later, and a log line is never redrawn."""
    at = parse_time(event.at).strftime("%H:%M:%SZ")
    who = clean(event.agent or "-")
    if event.task is None:  # a slot or landing event (issue 35)
        return f"{at}  {event.type:<15} {'':<6} {who:<19}  {clean(subject(event))}"
    return f"{at}  {event.type:<15} #{event.task_id:<5} {who:<19}  {clean(event.task.title)}"

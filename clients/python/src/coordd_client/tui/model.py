"""The board as `coord top` holds it: tasks by id, kept current by events, and the rows
a filter selects. No Textual here, so it is tested (and reasoned about) on its own."""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field
from datetime import datetime

from coordd_client.protocol.wire import Event, Task
from coordd_client.render import parse_time

STATES = ("pending", "claimed", "done", "failed", "cancelled")
#: The feed keeps this many recent events.
FEED_SIZE = 500


@dataclass
class Filter:
    states: frozenset[str] = frozenset({"pending", "claimed", "failed"})
    kind: str | None = None
    text: str = ""
    ready_only: bool = False
    mine: str | None = None  # an agent: held by or assigned to

    def admits(self, task: Task) -> bool:
        if task.state not in self.states:
            return False
        if self.kind is not None and task.kind != self.kind:
            return False
        if self.ready_only and not task.ready:
            return False
        if self.mine is not None and self.mine not in (task.claimed_by, task.assignee):
            return False
        return not self.text or self.text.lower() in task.title.lower()


@dataclass
class BoardModel:
    tasks: dict[int, Task] = field(default_factory=dict)
    feed: deque[Event] = field(default_factory=lambda: deque(maxlen=FEED_SIZE))
    last_seq: int = 0
    #: Kept as events arrive, so neither the footer nor the countdown walks every task.
    state_counts: Counter[str] = field(default_factory=Counter)
    claimed: set[int] = field(default_factory=set)

    def load(self, tasks: list[Task], last_seq: int) -> None:
        self.tasks = {t.id: t for t in tasks}
        self.last_seq = last_seq
        self.state_counts = Counter(t.state for t in tasks)
        self.claimed = {t.id for t in tasks if t.state == "claimed"}

    def apply(self, events: list[Event]) -> set[int]:
        """Apply events in seq order; the ids of the tasks that changed."""
        changed: set[int] = set()
        for event in events:
            if event.seq <= self.last_seq:
                continue  # seen already (a resume replays from the last seq)
            self.last_seq = event.seq
            old = self.tasks.get(event.task_id)
            if old is not None:
                self.state_counts[old.state] -= 1
            self.state_counts[event.task.state] += 1
            if event.task.state == "claimed":
                self.claimed.add(event.task_id)
            else:
                self.claimed.discard(event.task_id)
            self.tasks[event.task_id] = event.task
            self.feed.append(event)
            changed.add(event.task_id)
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
    seconds = max(0, int((now - parse_time(text)).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"

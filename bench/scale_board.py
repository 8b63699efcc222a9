"""The boards `make bench-scale` measures: a team's board after months, built two ways.

The shape: 95% of tasks done (each posted, claimed, then completed, its three events
kept), 5% open (3% pending, 2% claimed and live), in four projects (70% in the one the
surfaces look at, which is the bench repository's path, as `coord` derives it), by
50 agents, with a few messages. Both builders play the same script (`plan`), one
operation at a time in the same order, so they give the same rows:

- `build_wire`: every operation as a request to a real daemon (`task.post`,
  `task.claim` with the script's `request_key`, `task.complete`): what users' calls
  write. Minutes at 100,000 tasks.
- `build_fast`: the same rows written straight into a migrated SQLite file in one
  transaction: each task's final row, its events with the task as the wire carries it
  at that moment (the JSON `transaction.TASK_JSON` makes, in its key order), the
  events' chain (`prev_seq`, `event_seq`), the agents' last-seen. Timestamps are
  spread over the two days before the build; the open claims are the newest
  operations, with the longest lease (a day), so a cached board's claims are live.

The messages go through a daemon in both cases. tests/system/test_bench_scale.py builds
a small board both ways and compares every row, modulo timestamps and the board id.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec

from coordd.clock import format_time
from coordd.store.connections import Durability, open_writer_connection
from coordd.store.schema import migrate
from coordd_client import Client, methods, methods_messages
from coordd_wire.params import DEFAULT_LEASE_S

AGENTS = tuple(f"agent-{n:02d}" for n in range(50))
OTHER_PROJECTS = ("/srv/api", "/srv/web", "/srv/infra")
#: The longest lease the wire takes (bounds.LEASE_S): a cached board's claims stay live.
OPEN_LEASE_S = 86_400.0
#: Tasks posted together before their claims and completions (a sprint's worth).
BLOCK = 100
MESSAGES = 60
TAGS = ("backend", "frontend", "infra", "docs", "flaky", "perf")
WORDS = ("parser", "cache", "index", "login", "export", "queue", "report", "hook", "sync")
VERBS = ("fix", "add", "refactor", "test", "document", "speed up", "remove", "review")


@dataclass(frozen=True)
class Spec:
    """One task of the script, as posted."""

    n: int
    project: str
    title: str
    body: str
    kind: str
    priority: int
    tags: tuple[str, ...]
    poster: str
    worker: str
    #: "done", "claimed" or "pending": what the script leaves it as.
    fate: str

    @property
    def key(self) -> str:
        """The claim's `request_key` (32 hex digits, as the clients make them)."""
        return f"{self.n + 1:032x}"

    @property
    def result(self) -> str:
        return f"done: {self.title}; tests pass, see the branch of {self.worker}"


def spec(n: int, main_project: str) -> Spec:
    """Task `n` of the script (0-based), deterministic."""
    bucket = n % 10
    project = main_project if bucket < 7 else OTHER_PROJECTS[bucket - 7]
    # Every 20th task is open, spread over the whole history: 2 in 5 of them claimed.
    fate = "done" if n % 20 else ("claimed" if (n // 20) % 5 in (0, 2) else "pending")
    word, verb = WORDS[n % len(WORDS)], VERBS[(n // 3) % len(VERBS)]
    return Spec(
        n=n,
        project=project,
        title=f"{verb} the {word} ({n})",
        body=(
            f"The {word} misbehaves when the board is large; reproduce with the steps in"
            f" the thread, then {verb} it and say what changed. Touches src/{word}/ and"
            f" its tests; ask before changing the public interface."
        ),
        kind="bug" if n % 7 == 0 else "task",
        priority=(n % 11) - 3 if n % 4 == 0 else 0,
        tags=tuple(TAGS[(n + k) % len(TAGS)] for k in range(n % 3)),
        poster=AGENTS[(n * 7) % len(AGENTS)],
        worker=AGENTS[(n * 13 + 5) % len(AGENTS)],
        fate=fate,
    )


def plan(size: int, main_project: str) -> Iterator[tuple[str, Spec]]:
    """The script: ("post" | "claim" | "complete", task). Blocks of posts, each followed
    by the claims and completions of its tasks that end done; the open claims last."""
    specs = [spec(n, main_project) for n in range(size)]
    for start in range(0, size, BLOCK):
        block = specs[start : start + BLOCK]
        for task in block:
            yield "post", task
        for task in block:
            if task.fate == "done":
                yield "claim", task
                yield "complete", task
    for task in specs:
        if task.fate == "claimed":
            yield "claim", task


def build_wire(socket: Path, size: int, main_project: str) -> None:
    """Play the script as requests to the daemon on `socket` (ids follow the script's)."""
    with Client(socket) as client:
        for op, task in plan(size, main_project):
            if op == "post":
                posted = client.send(
                    methods.post(
                        task.title,
                        body=task.body,
                        kind=task.kind,
                        project=task.project,
                        priority=task.priority,
                        tags=list(task.tags),
                        agent=task.poster,
                    )
                )
                assert posted.task.id == task.n + 1, "the board was not empty"
            elif op == "claim":
                lease = OPEN_LEASE_S if task.fate == "claimed" else None
                won = client.send(
                    methods.claim(task.n + 1, task.worker, lease_s=lease, request_key=task.key)
                )
                assert won.won
            else:
                client.send(methods.complete(task.n + 1, task.worker, result=task.result))


def add_messages(socket: Path, main_project: str) -> None:
    """A few direct messages between the agents (rows and `message.sent` events)."""
    with Client(socket) as client:
        for n in range(MESSAGES):
            sender, to = AGENTS[n % len(AGENTS)], AGENTS[(n * 3 + 1) % len(AGENTS)]
            body = f"#{n + 1}: I am on the {WORDS[n % len(WORDS)]}; shout if you touch it"
            client.send(
                methods_messages.send_message(body, to=to, agent=sender, project=main_project)
            )


class _Row:
    """A task's columns as the fast path tracks them through its events."""

    __slots__ = (
        "attempts",
        "claim_key",
        "claimed_at",
        "claimed_by",
        "created_at",
        "event_seq",
        "fence",
        "lease",
        "result",
        "spec",
        "state",
        "updated_at",
    )  # fmt: skip

    def __init__(self, task: Spec, at: str) -> None:
        self.spec = task
        self.state = "pending"
        self.created_at = self.updated_at = at
        self.claimed_by: str | None = None
        self.claimed_at: str | None = None
        self.lease: str | None = None
        self.fence = self.attempts = 0
        self.result: str | None = None
        self.event_seq: int | None = None
        self.claim_key: str | None = None

    def wire(self) -> msgspec.Raw:
        """The task's JSON as SQLite's `json_object` makes it (transaction.TASK_JSON)."""
        t = self.spec
        return msgspec.Raw(_encode({
            "id": t.n + 1, "project": t.project, "kind": t.kind, "title": t.title,
            "body": t.body, "state": self.state, "priority": t.priority,
            "tags": list(t.tags), "created_by": t.poster, "created_at": self.created_at,
            "updated_at": self.updated_at, "claimed_by": self.claimed_by,
            "claimed_at": self.claimed_at, "lease_expires_at": self.lease,
            "fence": self.fence, "attempts": self.attempts, "result": self.result,
            "assignee": None, "depends_on": [], "blocked_by": [],
        }))  # fmt: skip

    def values(self) -> tuple[object, ...]:
        t = self.spec
        return (
            t.n + 1, t.project, t.kind, t.title, t.body, self.state, t.priority,
            _encode(list(t.tags)).decode(), t.poster, self.created_at, self.updated_at,
            self.claimed_by, self.claimed_at, self.lease, self.fence, self.attempts,
            self.result, self.event_seq, self.claim_key,
        )  # fmt: skip


_encode = msgspec.json.Encoder().encode

INSERT_TASK = (
    "INSERT INTO tasks (id, project, kind, title, body, state, priority, tags, created_by,"
    " created_at, updated_at, claimed_by, claimed_at, lease_expires_at, fence, attempts,"
    " result, event_seq, claim_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
    " ?, ?, ?)"
)
INSERT_EVENT = (
    "INSERT INTO events (seq, type, project, at, data, task_id, prev_seq)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def build_fast(db: Path, size: int, main_project: str, now: datetime | None = None) -> None:
    """Write the script's rows into a new SQLite board at `db` in one transaction."""
    now = now or datetime.now(UTC)
    ops = list(plan(size, main_project))
    start = now - timedelta(days=2)
    step = (now - start) / max(1, len(ops))
    conn = open_writer_connection(db, Durability.NORMAL)
    try:
        migrate(conn)
        conn.execute("BEGIN IMMEDIATE")
        rows: dict[int, _Row] = {}
        seen: dict[str, str] = {}
        events: list[tuple[object, ...]] = []
        for seq, (op, task) in enumerate(ops, start=1):
            at = format_time(start + step * seq)
            if op == "post":
                row = rows[task.n] = _Row(task, at)
                agent, kind = task.poster, "task.posted"
            else:
                row = rows[task.n]
                agent = task.worker
                kind = "task.claimed" if op == "claim" else "task.completed"
                row.updated_at = at
                if op == "claim":
                    lease = OPEN_LEASE_S if task.fate == "claimed" else DEFAULT_LEASE_S
                    row.state, row.claimed_by, row.claimed_at = "claimed", task.worker, at
                    row.lease = format_time(start + step * seq + timedelta(seconds=lease))
                    row.fence += 1
                    row.attempts += 1
                    row.claim_key = task.key
                else:
                    row.state, row.lease, row.result = "done", None, task.result
            data = _encode({"seq": seq, "at": at, "type": kind, "task_id": task.n + 1,
                            "agent": agent, "task": row.wire()})  # fmt: skip
            events.append((seq, kind, task.project, at, data.decode(), task.n + 1, row.event_seq))
            row.event_seq = seq
            seen[agent] = at
            if len(events) >= 50_000:
                conn.executemany(INSERT_EVENT, events)
                events.clear()
        conn.executemany(INSERT_EVENT, events)
        conn.executemany(INSERT_TASK, (rows[n].values() for n in sorted(rows)))
        conn.executemany(
            "INSERT INTO agents (agent, last_seen) VALUES (?, ?)", sorted(seen.items())
        )
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def compare_rows(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row a board's builder wrote, without what differs between two builds
    (timestamps, the board id): what the fast path must reproduce."""
    times = ("created_at", "updated_at", "claimed_at", "lease_expires_at", "at", "last_seen")
    conn = sqlite3.connect(db)
    try:
        out: dict[str, list[tuple[object, ...]]] = {}
        for table in ("tasks", "events", "agents", "messages", "message_recipients"):
            columns = [c[1] for c in conn.execute(f"PRAGMA table_info({table})")]
            kept = [c for c in columns if c not in times]
            if table == "events":  # the timestamps inside the wire JSON too
                kept = [c if c != "data" else _DATA_WITHOUT_TIMES for c in kept]
            out[table] = conn.execute(
                f"SELECT {', '.join(kept)} FROM {table} ORDER BY 1"
            ).fetchall()
        out["indexes"] = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name"
        ).fetchall()
        out["sequences"] = conn.execute("SELECT * FROM sqlite_sequence ORDER BY name").fetchall()
        out["checks"] = conn.execute("PRAGMA integrity_check").fetchall()
        return out
    finally:
        conn.close()


_DATA_WITHOUT_TIMES = (
    "json_remove(data, '$.at', '$.task.created_at', '$.task.updated_at',"
    " '$.task.claimed_at', '$.task.lease_expires_at', '$.message.created_at')"
)

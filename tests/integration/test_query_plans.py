"""Regression guards for the claim path that are not timings: query plans and statement counts."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

import msgspec
import pytest
import trio

from coordd.store import claims, holding, reads, transaction, writes
from coordd.store.connections import Durability, SqliteDb, open_writer_connection
from coordd.store.schema import MIGRATIONS, migrate
from coordd.store.writer import Writer
from coordd_client.aio import AsyncClient
from coordd_wire import params as P
from coordd_wire.wire import AgentInfo


@pytest.fixture
def conn(workdir: Path) -> SqliteDb:
    connection = open_writer_connection(workdir / "plans.db", Durability.FULL)
    migrate(connection)
    return connection


def plan(conn: SqliteDb, sql: str) -> str:
    return " | ".join(row[-1] for row in conn.execute("EXPLAIN QUERY PLAN " + sql))


def test_maintenance_queries_use_their_partial_indexes(conn: SqliteDb) -> None:
    # A plan on the whole table would scan every task on each reaper tick.
    statements = [
        "SELECT id, claimed_by FROM tasks INDEXED BY tasks_lease"
        " WHERE state = 'claimed' AND lease_expires_at <= '1'",
        "UPDATE tasks INDEXED BY tasks_lease SET lease_expires_at = '1'"
        " WHERE state = 'claimed' AND claimed_by = 'a' AND lease_expires_at > '0'",
    ]
    assert "COVERING INDEX tasks_lease (lease_expires_at<?)" in plan(conn, statements[0])
    assert "INDEX tasks_lease (lease_expires_at>?)" in plan(conn, statements[1])
    source = "".join(Path(str(m.__file__)).read_text() for m in (claims, holding, writes, reads))
    assert source.count("INDEXED BY tasks_lease") >= 5
    queue = plan(
        conn, "SELECT id FROM tasks WHERE state = 'pending' ORDER BY priority DESC, id LIMIT 1"
    )
    assert "COVERING INDEX tasks_pending" in queue and "TEMP B-TREE" not in queue
    # A task's history looks its events up one by one along the chain, never
    # scanning the log after `after_seq` (the plan of `events.since` with task_id).
    chain = reads._TASK_HISTORY.replace(":after", "0").replace(":task_id", "1")
    history = plan(conn, f"SELECT seq, data FROM events WHERE seq > 0 AND seq IN ({chain})")
    assert "SCAN events" not in history
    assert history.count("SEARCH events USING INTEGER PRIMARY KEY (rowid=?)") == 2, history


def test_state_counts_and_agent_holdings_read_indexes_only(conn: SqliteDb) -> None:
    """No index holds every task's state (a claim would move an entry in it): the
    counts `coordd check` makes read each state's partial index, the counts
    `server.info` answers read the kept counters alone (whatever transition made them:
    a claim, a cancel, a direct UPDATE), and agent.list passes the live claims once."""
    kept = plan(conn, reads._KEPT_STATES)
    assert "task_counts" in kept and " tasks " not in f" {kept} ", kept
    counts = plan(conn, reads._COUNTED_STATES)
    for index in ("tasks_pending", "tasks_lease", "tasks_finished"):
        assert f"COVERING INDEX {index}" in counts, counts
    assert all("USING COVERING INDEX" in step for step in counts.split(" | ") if "tasks" in step)
    conn.execute("INSERT INTO agents (agent, last_seen) VALUES ('a', '1'), ('b', '2')")
    assert reads.list_agents(conn, "0").agents == [
        AgentInfo(agent="b", last_seen="2", holding=0),
        AgentInfo(agent="a", last_seen="1", holding=0),
    ]
    conn.execute("BEGIN IMMEDIATE")
    txn = transaction.Txn(conn, datetime.now(UTC), {}, 1)
    for n, state in enumerate(["pending", "claimed", "done", "failed", "cancelled", "done"]):
        posted = writes.post_task(txn, P.PostParams(title=f"s{n}")).task
        task_id = int(msgspec.json.encode(posted).split(b'"id":')[1].split(b",")[0])
        if state != "pending":
            claims.claim_task(txn, P.ClaimParams(id=task_id, agent="a"))
        if state in ("done", "failed"):
            conn.execute(
                "UPDATE tasks SET state = ?, lease_expires_at = NULL WHERE id = ?",
                (state, task_id),
            )
        elif state == "cancelled":
            writes.cancel_task(txn, P.CancelParams(id=task_id, agent="a"))
    conn.execute("COMMIT")
    expected = {"pending": 1, "claimed": 1, "done": 2, "failed": 1, "cancelled": 1}
    assert reads.counted_states(conn) == expected
    assert reads.state_counts(conn) == expected
    holdings = {a.agent: a.holding for a in reads.list_agents(conn, "0").agents}
    assert holdings == {"a": 1, "b": 0}


def count_statements(conn: SqliteDb, action: Callable[[], object]) -> int:
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        action()
    finally:
        conn.set_trace_callback(None)
    return len(ran(seen))


def ran(traced: list[str]) -> list[str]:
    """The statements the code ran, from SQLite's trace: a trigger's steps (the kept
    task counts, `task_counts_schema`) are traced again under the text of the statement
    that fired them, and are counted with it, once. What they write is counted in WAL
    frames (tests/integration/test_hot_path_guards.py)."""
    return [sql for n, sql in enumerate(traced) if n == 0 or sql != traced[n - 1]]


class _Recording:
    """A connection that keeps each statement and its args, so their plans can be asked."""

    last_seq_sql = ""

    def __init__(self, conn: SqliteDb) -> None:
        self.conn = conn
        self.statements: list[tuple[str, object]] = []

    def execute(self, sql: str, parameters: object = ()) -> sqlite3.Cursor:
        self.statements.append((sql, parameters))
        return self.conn.execute(sql, parameters)  # type: ignore[arg-type]


def test_open_task_lists_and_counts_walk_only_open_tasks_indexes(conn: SqliteDb) -> None:
    """1.2 section 6c: the most urgent (or newest) open tasks and their counts, whatever
    the filter, read the partial indexes of pending tasks and live claims: never the
    table, the project index (every finished task of the project) or the finished
    tasks' index; a finished state asked for is one seek into the latter. Pending
    tasks in claim order come in index order, with no sort of their own."""
    shapes: list[dict[str, object]] = [
        {"state": ["pending", "claimed"], "project": "/p"},
        {"state": ["pending", "claimed"], "project": "/p", "kind": "bug", "tag": "ci"},
        {"ready": True, "project": "/p", "open_to": "a"},
        {"state": "claimed", "claimed_by": "a", "project": "/p"},
        {"state": "pending", "assignee": "a", "after_id": 7, "after_priority": 3},
        {"state": ["pending", "claimed"], "project": "/p", "order": "newest", "after_id": 9},
        {"state": ["pending", "claimed", "failed"], "project": "/p"},
        {"state": ["pending", "claimed", "failed"], "project": "/p", "order": "id"},
    ]
    for shape in shapes:
        recording = _Recording(conn)
        asked = {"order": "urgent", **shape}
        params = P.ListParams(counts=True, limit=5, **asked)  # type: ignore[arg-type]
        reads.list_tasks(cast(SqliteDb, recording), params)
        assert len(recording.statements) == 2, shape  # the counts, then the tasks
        allowed = ["USING INDEX tasks_pending", "USING INDEX tasks_lease"]
        if "failed" in cast(list[str], shape.get("state", [])):
            allowed.append("USING INDEX tasks_finished (state=?)")
        for sql, args in recording.statements:
            rows = list(conn.execute("EXPLAIN QUERY PLAN " + sql, args))  # type: ignore[arg-type]
            on_tasks = [row[-1] for row in rows if " tasks " in row[-1] + " "]
            if "FROM task_counts" in sql:  # counts narrowed by the project alone: kept
                assert not on_tasks and any("task_counts" in row[-1] for row in rows), rows
                continue
            assert any("INDEX tasks_" in step for step in on_tasks), (shape, on_tasks)
            for step in on_tasks:  # the indexes' walks, and the answered rows by id
                assert any(index in step for index in allowed) or (
                    step == "SEARCH tasks USING INTEGER PRIMARY KEY (rowid=?)"
                ), (shape, step)
            if asked["order"] == "urgent":
                arm = [row[0] for row in rows if row[-1] == "CO-ROUTINE pending_arm"]
                sorted_arm = [row for row in rows if row[1] in arm and "TEMP B-TREE" in row[-1]]
                assert not sorted_arm, (shape, rows)  # read in claim order, never sorted


def test_statements_per_claim_stay_fixed(conn: SqliteDb) -> None:
    agents: dict[str, datetime] = {}
    conn.execute("BEGIN IMMEDIATE")
    txn = transaction.Txn(conn, datetime.now(UTC), agents, 1)
    ids = [writes.post_task(txn, P.PostParams(title=f"t{n}")).task for n in range(3)]
    task_ids = [int(msgspec.json.encode(raw).split(b'"id":')[1].split(b",")[0]) for raw in ids]

    def claim(task_id: int, agent: str) -> None:
        claims.claim_task(txn, P.ClaimParams(id=task_id, agent=agent))

    # A won claim: the conditional UPDATE and recording the agent as seen (its event
    # is stored with the rest of its group's, in one statement: the next test).
    assert count_statements(conn, lambda: claim(task_ids[0], "a")) == 2
    # The same agent again within a second: it is not recorded twice.
    assert count_statements(conn, lambda: claim(task_ids[1], "a")) == 1
    # A lost claim: the UPDATE that matched nothing, the read of the holder, the agent.
    assert count_statements(conn, lambda: claim(task_ids[1], "b")) == 3
    conn.execute("ROLLBACK")


async def test_a_group_of_claims_costs_its_statements_and_three_per_group(
    writer: Writer,
) -> None:
    """A claim is its UPDATE and its event's INSERT (the group's, in one executemany);
    the group adds BEGIN, COMMIT and one statement linking the tasks to their newest
    events: no savepoints unless a command fails.
    Counted with SQLite's trace hook (it sees each row of an executemany), not timed."""
    posted = []
    for n in range(16):
        posted.append((await writer.submit(writes.post_task, P.PostParams(title=f"g{n}"))).task)
    ids = [int(msgspec.json.encode(raw).split(b'"id":')[1].split(b",")[0]) for raw in posted]
    seen: list[str] = []
    # The writer thread's own connection, traced on that thread.
    db = cast(SqliteDb, writer._store.db)
    before = writer.statistics().transactions
    db.set_trace_callback(seen.append)
    try:
        async with trio.open_nursery() as nursery:
            for task_id in ids:
                nursery.start_soon(
                    writer.submit, claims.claim_task, P.ClaimParams(id=task_id, agent="g")
                )
    finally:
        db.set_trace_callback(None)
    seen = ran(seen)
    groups = writer.statistics().transactions - before
    assert not [s for s in seen if "SAVEPOINT" in s or "RELEASE" in s]
    updates = [s for s in seen if s.startswith("UPDATE tasks SET state = 'claimed'")]
    assert len(updates) == 16
    inserts = [s for s in seen if s.startswith("INSERT INTO events")]
    assert len(inserts) == 16
    # Per group: BEGIN, COMMIT and the tasks' newest event seqs in one statement;
    # plus the agent's last-seen once.
    assert len([s for s in seen if s.startswith("UPDATE tasks SET event_seq")]) == groups
    assert len(seen) == 16 + 16 + 3 * groups + 1, seen


async def test_a_failing_command_is_undone_alone(writer: Writer) -> None:
    """The optimistic group is rolled back whole and run again with savepoints: the
    failure undoes only its own command, and the others' events are stored once."""
    posted = await writer.submit(writes.post_task, P.PostParams(title="held"))
    task_id = int(msgspec.json.encode(posted.task).split(b'"id":')[1].split(b",")[0])
    errors: list[Exception] = []

    async def complete_unheld() -> None:
        try:
            await writer.submit(holding.complete_task, P.CompleteParams(id=task_id, agent="x"))
        except Exception as exc:
            errors.append(exc)

    gate = threading.Event()
    seen: list[str] = []
    db = cast(SqliteDb, writer._store.db)
    before = writer.statistics().transactions
    async with trio.open_nursery() as nursery:
        # Hold the writer thread so the three commands queue up and run as one group.
        nursery.start_soon(writer.submit_outside_transaction, lambda _db: gate.wait(10))
        await trio.sleep(0.05)
        db.set_trace_callback(seen.append)
        nursery.start_soon(writer.submit, writes.post_task, P.PostParams(title="a"))
        await trio.sleep(0.01)
        nursery.start_soon(complete_unheld)
        await trio.sleep(0.01)
        nursery.start_soon(writer.submit, writes.post_task, P.PostParams(title="b"))
        await trio.sleep(0.05)
        gate.set()
    db.set_trace_callback(None)
    assert writer.statistics().transactions - before == 1  # one group, committed once
    assert "ROLLBACK" in seen and seen.count("SAVEPOINT command") == 3  # the second run
    assert [type(e).__name__ for e in errors] == ["LeaseLost"]
    published = writer.published  # type: ignore[attr-defined]
    assert [e.seq for e in published] == [1, 2, 3]
    assert [e.type for e in published] == ["task.posted"] * 3
    assert reads.last_seq(db) == 3
    titles = [t for (t,) in db.execute("SELECT title FROM tasks ORDER BY id")]
    assert titles == ["held", "a", "b"]


class _SpawnCounter(trio.abc.Instrument):
    def __init__(self) -> None:
        self.spawned = 0

    def task_spawned(self, task: trio.lowlevel.Task) -> None:
        self.spawned += 1


async def test_single_writes_and_pings_spawn_no_task_per_request(aclient: AsyncClient) -> None:
    """The fast paths stay fast: a lone write is queued by the connection and
    answered by the writer thread, and a ping is answered where its frame was
    read, so neither costs the daemon a trio task (the task path spawns one per
    request, as `task.list` does). Counted with a trio instrument over the real
    socket, not timed."""
    posted = [(await aclient.post(f"guard {n}")).task.id for n in range(40)]
    # A client asks `server.info` once, at its first claim, whether claims take a
    # request key (docs/PROTOCOL-1.2.md section 5a): asked here, before the count.
    assert await aclient.supports("claim_request_key")
    counter = _SpawnCounter()
    trio.lowlevel.add_instrument(counter)
    try:
        for task_id in posted:
            assert (await aclient.claim(task_id, "guard")).won
        writes = counter.spawned
        for _ in posted:
            await aclient.ping()
        pings = counter.spawned - writes
        for _ in posted:
            await aclient.list_tasks(limit=1)
        lists = counter.spawned - writes - pings
    finally:
        trio.lowlevel.remove_instrument(counter)
    assert writes == 0 and pings == 0
    assert lists >= len(posted)  # the instrument sees the daemon's tasks: it can fail


def _board_at_version(path: Path, version: int) -> sqlite3.Connection:
    """A board as a coordd of schema `version` left it: its first steps, run by hand."""
    board = sqlite3.connect(path, isolation_level=None)
    for step in MIGRATIONS[:version]:
        for statement in step:
            board.execute(statement)
    board.execute(f"PRAGMA user_version = {version}")
    return board


def test_a_board_from_before_the_claim_indexes_keeps_its_counts(workdir: Path) -> None:
    """Schema step 4 only swaps indexes: a board written at step 3 comes through
    with every task counted in its state and the old indexes gone."""
    path = workdir / "old.db"
    old = _board_at_version(path, 3)
    for n, state in enumerate(["pending", "pending", "claimed", "done", "failed", "cancelled"]):
        claimed = state == "claimed"
        old.execute(
            "INSERT INTO tasks (project, kind, title, body, state, priority, tags, created_at,"
            " updated_at, claimed_by, lease_expires_at) VALUES ('p', 'task', ?, '', ?, 0, '[]',"
            " '1', '1', ?, ?)",
            (f"t{n}", state, "a" if claimed else None, "9" if claimed else None),
        )
    old.close()
    connection = open_writer_connection(path, Durability.FULL)
    assert migrate(connection) == len(MIGRATIONS)
    assert reads.state_counts(connection) == {
        "pending": 2, "claimed": 1, "done": 1, "failed": 1, "cancelled": 1
    }  # fmt: skip
    indexes = {name for (name,) in connection.execute("SELECT name FROM sqlite_schema")}
    assert {"tasks_pending", "tasks_lease", "tasks_finished"} <= indexes
    assert not {"tasks_queue", "tasks_holder"} & indexes


def test_a_board_from_before_the_event_chain_gets_its_histories_linked(workdir: Path) -> None:
    """Schema step 5 links the events already stored: each task's history reads
    the same from the chain as it did from the index the step drops."""
    path = workdir / "old.db"
    old = _board_at_version(path, 4)
    for n in range(3):
        old.execute(
            "INSERT INTO tasks (project, kind, title, body, state, priority, tags, created_at,"
            " updated_at) VALUES ('p', 'task', ?, '', 'pending', 0, '[]', '1', '1')",
            (f"t{n}",),
        )
    owners = [1, 2, 1, 3, 1, 2, 3, 3, 1]
    for seq, task_id in enumerate(owners, start=1):
        old.execute(
            "INSERT INTO events (seq, type, project, at, data, task_id)"
            " VALUES (?, 'task.posted', 'p', '1', ?, ?)",
            (seq, f'{{"seq":{seq},"task_id":{task_id}}}', task_id),
        )
    old.close()
    connection = open_writer_connection(path, Durability.FULL)
    migrate(connection)
    for task_id in (1, 2, 3):
        expected = [seq for seq, owner in enumerate(owners, start=1) if owner == task_id]
        history, _ = reads.events_since(connection, 0, 100, None, None, task_id=task_id)
        assert [json.loads(bytes(e))["seq"] for e in history] == expected
        later, _ = reads.events_since(connection, expected[0], 100, None, None, task_id=task_id)
        assert [json.loads(bytes(e))["seq"] for e in later] == expected[1:]
    indexes = {name for (name,) in connection.execute("SELECT name FROM sqlite_schema")}
    assert "events_task" not in indexes

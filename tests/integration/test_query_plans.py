"""Regression guards for the claim path that are not timings: query plans and statement counts."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
import trio

from coordd.protocol import params as P
from coordd.store import claims, holding, reads, transaction, writes
from coordd.store.connections import Durability, open_writer_connection
from coordd.store.schema import migrate
from coordd_client.aio import AsyncClient


@pytest.fixture
def conn(workdir: Path) -> sqlite3.Connection:
    connection = open_writer_connection(workdir / "plans.db", Durability.FULL)
    migrate(connection)
    return connection


def plan(conn: sqlite3.Connection, sql: str) -> str:
    return " | ".join(row[-1] for row in conn.execute("EXPLAIN QUERY PLAN " + sql))


def test_maintenance_queries_use_their_partial_indexes(conn: sqlite3.Connection) -> None:
    # A plan on tasks_queue (state=?) would scan every claimed task on each reaper tick.
    statements = [
        "SELECT id, claimed_by FROM tasks INDEXED BY tasks_lease"
        " WHERE state = 'claimed' AND lease_expires_at <= '1'",
        "UPDATE tasks INDEXED BY tasks_holder SET lease_expires_at = '1'"
        " WHERE state = 'claimed' AND claimed_by = 'a' AND lease_expires_at > '0'",
    ]
    assert "tasks_lease" in plan(conn, statements[0])
    assert "tasks_holder" in plan(conn, statements[1])
    source = "".join(Path(m.__file__).read_text() for m in (claims, holding, writes, reads))
    assert (
        source.count("INDEXED BY tasks_lease") >= 3 and source.count("INDEXED BY tasks_holder") >= 2
    )
    queue = plan(
        conn, "SELECT id FROM tasks WHERE state = 'pending' ORDER BY priority DESC, id LIMIT 1"
    )
    assert "COVERING INDEX tasks_queue" in queue and "TEMP B-TREE" not in queue


def count_statements(conn: sqlite3.Connection, action) -> int:
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        action()
    finally:
        conn.set_trace_callback(None)
    return len(seen)


def test_statements_per_claim_stay_fixed(conn: sqlite3.Connection) -> None:
    agents: dict[str, datetime] = {}
    conn.execute("BEGIN IMMEDIATE")
    txn = transaction.Txn(conn, datetime.now(UTC), agents, 1)
    ids = [writes.post_task(txn, P.PostParams(title=f"t{n}"))["task"] for n in range(3)]
    task_ids = [int(bytes(raw).split(b'"id":')[1].split(b",")[0]) for raw in ids]

    def claim(task_id: int, agent: str) -> None:
        claims.claim_task(txn, P.ClaimParams(id=task_id, agent=agent))

    # A won claim: the conditional UPDATE, its event, and recording the agent as seen.
    assert count_statements(conn, lambda: claim(task_ids[0], "a")) == 3
    # The same agent again within a second: it is not recorded twice.
    assert count_statements(conn, lambda: claim(task_ids[1], "a")) == 2
    # A lost claim: the UPDATE that matched nothing, the read of the holder, the agent.
    assert count_statements(conn, lambda: claim(task_ids[1], "b")) == 3
    conn.execute("ROLLBACK")


class _SpawnCounter(trio.abc.Instrument):
    def __init__(self) -> None:
        self.spawned = 0

    def task_spawned(self, task: trio.lowlevel.Task) -> None:
        self.spawned += 1


async def test_single_writes_spawn_no_task_per_request(aclient: AsyncClient) -> None:
    """The write fast path stays fast: a lone write is queued by the connection
    and answered by the writer thread, so it costs the daemon no trio task
    (the task path spawns one per request, as a ping still does). Counted
    with a trio instrument over the real socket, not timed."""
    posted = [(await aclient.post(f"guard {n}")).task.id for n in range(40)]
    counter = _SpawnCounter()
    trio.lowlevel.add_instrument(counter)
    try:
        for task_id in posted:
            assert (await aclient.claim(task_id, "guard")).won
        writes = counter.spawned
        for _ in posted:
            await aclient.ping()
        pings = counter.spawned - writes
    finally:
        trio.lowlevel.remove_instrument(counter)
    assert writes == 0
    assert pings == len(posted)  # the instrument sees the daemon's tasks: it can fail

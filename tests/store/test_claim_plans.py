"""`task.claim_next` finds its task by walking the pending tasks in priority order, on
both stores, in every form (with or without a project, a kind, tags): never a scan of
the table or of a project's tasks, and (SQLite) never a sort, so a board's done history
costs it nothing (issue 59:
with a project named it read and sorted every task of the project, 109 ms at 100,000
tasks). Checked on the plan each store makes for the very statement `claim_next` runs,
on a board shaped as a long-lived one (95% of its tasks done), and on its answers."""

from __future__ import annotations

from typing import Any

import pytest

from coordd.store.claims import next_pending_sql
from coordd.store.sql import to_postgres
from coordd.store.transaction import Txn
from coordd_wire import params as P
from store.board import Board, Seat

pytestmark = pytest.mark.both_backends

#: Tasks on the board: one in twenty pending, the rest done, over three projects.
TASKS = 20_000

FORMS: dict[str, dict[str, Any]] = {
    "plain": {},
    "project": {"project": "p1"},
    "kind": {"kind": "bug"},
    "tags": {"tags": ["ui", "db"]},
    "project, kind and tags": {"project": "p2", "kind": "bug", "tags": ["ui"]},
}


def _fill(tx: Txn) -> None:
    """A long-lived board's rows, written directly: the plans depend on the rows, not
    on how they came (no events needed)."""
    tx.conn.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < :count)"
        " INSERT INTO tasks (project, kind, title, body, state, priority, tags, created_at,"
        " updated_at, result)"
        " SELECT 'p' || (i % 3), CASE WHEN i % 7 = 0 THEN 'bug' ELSE 'task' END, 'work', '',"
        " CASE WHEN i % 20 = 0 THEN 'pending' ELSE 'done' END, i % 4,"
        ' CASE WHEN i % 40 = 0 THEN \'["db","ui"]\' ELSE \'["ui"]\' END, :now, :now,'
        " CASE WHEN i % 20 = 0 THEN NULL ELSE 'ok' END FROM n",
        {"count": TASKS, "now": tx.now_text},
    )


def _plan(board: Board, sql: str, args: dict[str, Any]) -> str:
    """The store's plan for `sql`, as one text."""
    if board.backend == "sqlite":
        rows = board.store.db.execute(f"EXPLAIN QUERY PLAN {sql}", args).fetchall()
        return "\n".join(str(row[3]) for row in rows)
    board.store.db.execute("ANALYZE tasks")  # as autovacuum would have, on a board this old
    rows = board.store.db.execute(f"EXPLAIN {sql}", args).fetchall()
    return "\n".join(str(row[0]) for row in rows)


@pytest.mark.parametrize("form", FORMS)
def test_claim_next_walks_the_pending_queue_in_order(board: Board, client: Seat, form: str) -> None:
    board.run(_fill)
    params = P.ClaimNextParams(agent="w", **FORMS[form])
    args: dict[str, Any] = {"agent": "w"}
    sql = next_pending_sql(params, args)
    plan = _plan(board, sql, args)
    if board.backend == "sqlite":
        assert "USING INDEX tasks_pending" in plan, plan
        assert "SCAN tasks\n" not in plan + "\n" and "FOR ORDER BY" not in plan, plan
    else:
        # PostgreSQL may sort the few pending rows that match rather than walk them in
        # order; either way it reads the pending tasks only, through the queue's index.
        assert "tasks_pending" in plan and "Seq Scan on tasks" not in plan, (to_postgres(sql), plan)
        assert "tasks_project" not in plan, plan
    # And the walk answers what the order says: the best match, first by priority then id.
    (best,) = board.store.db.execute(
        "SELECT id FROM tasks WHERE state = 'pending'"
        + "".join(f" AND {k} = :{k}" for k in ("project", "kind") if k in FORMS[form])
        + (" AND instr(tags, 'db') > 0" if "db" in FORMS[form].get("tags", []) else "")
        + " ORDER BY priority DESC, id LIMIT 1",
        FORMS[form],
    ).fetchall()[0]
    task = client.claim_next("w", **FORMS[form]).task
    assert task is not None and task.id == best

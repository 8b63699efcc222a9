"""`WaitFilter.matches` (live events, in memory) agrees with the SQL filter (stored tasks).

`task.wait` answers from the database when a task matches already and from
the event hub when one matches later; if the two filters ever disagreed, a
wait would fire for a live task it would not find stored, or the reverse.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from coordd.events import WaitFilter
from coordd.store.connections import open_connection
from coordd.store.reads import task_filters
from coordd.store.schema import migrate
from coordd.store.transaction import TASK_JSON
from coordd_wire.params import WaitParams
from coordd_wire.wire import STATES

# Few values, so filters and tasks often meet; titles with case-folding traps.
projects = st.sampled_from(["/repo/a", "/repo/b", "default"])
kinds = st.sampled_from(["task", "bug", "ack"])
tags = st.lists(st.sampled_from(["ci", "parser", "ui", "ÉCRAN"]), max_size=3, unique=True)
# Dotted and dotless i, sharp s and sigma: the letters whose case folding surprises.
title_text = st.text(alphabet="aAbBéÉßẞİiıΣσς %_-", min_size=1, max_size=12)  # noqa: RUF001

task_rows = st.fixed_dictionaries(
    {
        "project": projects,
        "kind": kinds,
        "state": st.sampled_from(STATES),
        "title": title_text,
        "tags": tags,
        "assignee": st.sampled_from([None, "a", "b"]),
        # An index into the rows before it: this row depends on that one.
        "after": st.one_of(st.none(), st.integers(min_value=0, max_value=11)),
    }
)

filters = st.fixed_dictionaries(
    {},
    optional={
        "project": projects,
        "kind": kinds,
        "state": st.one_of(
            st.sampled_from(STATES), st.lists(st.sampled_from(STATES), min_size=1, max_size=3)
        ),
        "tag": st.sampled_from(["ci", "parser", "ÉCRAN", "none"]),
        "title_contains": title_text,
        "assignee": st.sampled_from(["a", "b"]),
        "ready": st.booleans(),
    },
)


def _board(rows: list[dict[str, Any]], tmp: str) -> sqlite3.Connection:
    conn = open_connection(tmp)  # type: ignore[arg-type]
    migrate(conn)
    conn.execute("DELETE FROM tasks")
    for index, row in enumerate(rows):
        claimed = row["state"] == "claimed"
        after = row["after"] if row["after"] is not None and row["after"] < index else None
        depends_on = [] if after is None else [after + 1]  # ids start at 1
        open_deps = int(after is not None and rows[after]["state"] != "done")
        conn.execute(
            "INSERT INTO tasks (project, kind, title, body, state, priority, tags, created_at,"
            " updated_at, claimed_by, lease_expires_at, assignee, depends_on, open_deps)"
            " VALUES (?, ?, ?, '', ?, 0, ?, 't', 't', ?, ?, ?, ?, ?)",
            (
                row["project"],
                row["kind"],
                row["title"],
                row["state"],
                json.dumps(row["tags"]),
                "a" if claimed else None,
                "t" if claimed else None,
                row["assignee"],
                json.dumps(depends_on),
                open_deps,
            ),
        )
    return conn


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(task_rows, max_size=12), wanted=filters)
def test_the_memory_filter_and_the_sql_filter_agree(
    rows: list[dict[str, Any]], wanted: dict[str, Any]
) -> None:
    state = wanted.get("state")
    states = [state] if isinstance(state, str) else state
    assume(not ("ready" in wanted and states is not None and "pending" not in states))
    params = WaitParams(timeout_s=0, **wanted)
    conn = _board(rows, ":memory:")
    where: list[str] = ["1"]
    args: dict[str, Any] = {}
    task_filters(where, args, params)
    by_sql = {
        task_id
        for (task_id,) in conn.execute(f"SELECT id FROM tasks WHERE {' AND '.join(where)}", args)
    }
    flt = WaitFilter(params)
    in_memory = {
        task_id
        for task_id, task_json in conn.execute(f"SELECT id, {TASK_JSON} FROM tasks")
        if flt.matches_json(task_json)
    }
    conn.close()
    assert by_sql == in_memory, (rows, wanted)

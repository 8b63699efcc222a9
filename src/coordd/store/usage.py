"""The token ledger (docs/PROTOCOL-1.2.md section 15, issue 48): record and query.

`report` runs in the writer: entries already in the ledger (the key is host and
entry id) are skipped, so a retried report or two hooks of one turn count once;
each new entry is charged to what its agent held when it was spent
(`attribution.held_at`: walked back through the log on a reader first, `walk`,
so that the writer reads only what was committed since), split evenly
(`split`); and one `usage.reported` event says what the report added, however
many entries it carried, so the log grows by one event per report, not per
model call. `query` sums the charges on a reader.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec

from coordd.clock import format_time
from coordd.limits import Limits
from coordd.store import attribution, messages_unseen
from coordd.store.messages import insert_message
from coordd.store.sql import Db
from coordd.store.transaction import CLEAR_CLAIM, ROW_COLUMNS, Txn, in_list, one_row
from coordd_wire import params_usage as U
from coordd_wire.wire import BudgetCrossing
from coordd_wire.wire_usage import (
    Budget,
    Charge,
    CostResult,
    CostRow,
    Tokens,
    UsageReportResult,
)

KINDS = ("input", "output", "cache_creation", "cache_read")
_encoder = msgspec.json.Encoder()


def instant(text: str) -> str:
    """A reported instant (any RFC 3339 offset) as the store writes instants, which sort
    as text: `2026-12-06T07:01:02.345000Z`. An instant without an offset is UTC."""
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return format_time(moment)


def split(amount: int, ways: int) -> list[int]:
    """`amount` in `ways` whole parts that sum to it: equal, and the remainder one
    each to the first parts (the tasks of lowest id), so nothing is lost or made up."""
    base, rest = divmod(amount, ways)
    return [base + (1 if index < rest else 0) for index in range(ways)]


class _NothingNew(UsageReportResult, frozen=True, kw_only=True, omit_defaults=True):
    """`usage.report`'s answer when every entry was in the ledger already, as 1.2 sends
    it: `seq` null and no `budgets` member (omitted at its default; `seq` is sent, its
    default here being one it never takes)."""

    seq: int | None = -1


def walk(conn: Db, p: U.UsageReportParams, now: str) -> attribution.Walked:
    """On a reader, before the report's write: what its agent held when each entry was
    spent, as of the reader's snapshot (the long walk, off the writer)."""
    return attribution.walk_on_reader(conn, p.agent, [instant(e.at) for e in p.entries], now)


def report(tx: Txn, p: U.UsageReportParams, walked: attribution.Walked) -> UsageReportResult:
    """`usage.report`: the entries new to the ledger recorded and charged, one event,
    and the budgets they carried past a threshold (module docstring). `walked`: the
    reader's attribution (`walk`); the writer walks only the events since it."""
    tx.touch_agent(p.agent)
    unique: dict[str, U.UsageEntry] = {}
    for entry in p.entries:
        unique.setdefault(entry.id, entry)
    args: dict[str, Any] = {"host": p.host}
    ids = in_list("e", list(unique), args)
    known = {
        row[0]
        for row in tx.conn.execute(
            f"SELECT entry_id FROM usage_entries WHERE host = :host AND entry_id IN {ids}", args
        ).fetchall()
    }
    new = [entry for key, entry in unique.items() if key not in known]
    duplicates = len(p.entries) - len(new)
    if not new:
        return _NothingNew(recorded=0, duplicates=duplicates, charges=[], seq=None)
    instants = [instant(entry.at) for entry in new]
    holdings = attribution.held_at(
        tx.conn,
        p.agent,
        instants,
        tx.now_text,
        limit=Limits.usage_attribution_writer_events,
        unstored=tx.group_events,
        walked=walked,
    )
    projects = _projects(tx.conn, {task for held in holdings for task in held or ()})
    tx.conn.executemany(
        "INSERT INTO usage_entries (host, entry_id, agent, session, project, model, at,"
        " input, output, cache_creation, cache_read, reported_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (p.host, e.id, p.agent, p.session, p.project, e.model, at,
             e.input, e.output, e.cache_creation, e.cache_read, tx.now_text)
            for e, at in zip(new, instants, strict=True)
        ],
    )  # fmt: skip
    rows: list[tuple[Any, ...]] = []
    totals: dict[int | None, list[int]] = {}
    for entry, at, held in zip(new, instants, holdings, strict=True):
        tasks: tuple[int | None, ...] = held or (None,)
        parts = [split(getattr(entry, kind), len(tasks)) for kind in KINDS]
        for index, task in enumerate(tasks):
            amounts = [part[index] for part in parts]
            project = p.project if task is None else projects[task]
            rows.append((p.host, entry.id, task, project, p.agent, entry.model, at, *amounts))
            sums = totals.setdefault(task, [0, 0, 0, 0])
            for kind, amount in enumerate(amounts):
                sums[kind] += amount
    tx.conn.executemany(
        "INSERT INTO usage_charges (host, entry_id, task_id, project, agent, model, at,"
        " input, output, cache_creation, cache_read) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    order = sorted(totals, key=lambda task: (task is None, task or 0))
    charges = [
        Charge(task_id=task, **dict(zip(KINDS, totals[task], strict=True))) for task in order
    ]
    seq = tx.next_seq
    usage = {
        "host": p.host,
        "session": p.session,
        "recorded": len(new),
        "tokens": sum(sum(values) for values in totals.values()),
        "task_ids": order,
    }

    def encode(event_seq: int) -> bytes:
        return _encoder.encode(
            {"seq": event_seq, "at": tx.now_text, "type": "usage.reported", "task_id": None,
             "agent": p.agent, "task": None, "project": p.project, "usage": usage}
        )  # fmt: skip

    tx.emit_untasked("usage.reported", p.project, encode)
    crossed = _check_budgets(tx, p.agent, [task for task in order if task is not None], projects)
    for crossing in crossed:
        if crossing.threshold == 100 and p.notify is not None and p.notify != p.agent:
            _tell(tx, p.agent, p.notify, crossing, projects[crossing.task_id])
    return UsageReportResult(
        recorded=len(new), duplicates=duplicates, charges=charges, seq=seq, budgets=crossed
    )


#: The thresholds a `usage.budget` event is appended at, in percent of the budget.
THRESHOLDS = (80, 100)
_SPENT = "(input + output + cache_creation + cache_read)"


def _check_budgets(
    tx: Txn, agent: str, tasks: list[int], projects: dict[int, str]
) -> list[BudgetCrossing]:
    """For each task this report charged that has a budget: the highest threshold its
    charges now reach, if no event said so yet; one `usage.budget` event for each, on
    the task's history. What a budget can do is say so: the turn that crossed it was
    already spent, and the tab decides what to do with the warning."""
    if not tasks:
        return []
    args: dict[str, Any] = {}
    ids = in_list("t", tasks, args)
    found = tx.conn.execute(
        f"SELECT b.task_id, b.tokens, b.warned, (SELECT CAST(SUM({_SPENT}) AS BIGINT)"
        f" FROM usage_charges AS c WHERE c.task_id = b.task_id), t.event_seq, b.release"
        f" FROM task_budgets AS b JOIN tasks AS t ON t.id = b.task_id"
        f" WHERE b.task_id IN {ids} ORDER BY b.task_id",
        args,
    ).fetchall()
    crossed: list[BudgetCrossing] = []
    for task_id, tokens, warned, spent, event_seq, release in found:
        reached = max((t for t in THRESHOLDS if (spent or 0) * 100 >= t * tokens), default=0)
        if reached <= warned:
            continue
        tx.conn.execute("UPDATE task_budgets SET warned = ? WHERE task_id = ?", (reached, task_id))
        holder = _holder(tx, task_id) if reached == 100 and release else None
        crossing = BudgetCrossing(task_id=task_id, tokens=tokens, spent=spent, threshold=reached,
                                  released=holder is not None)  # fmt: skip
        crossed.append(crossing)

        def encode(event_seq: int, crossing: BudgetCrossing = crossing) -> bytes:
            return _encoder.encode(
                {"seq": event_seq, "at": tx.now_text, "type": "usage.budget",
                 "task_id": crossing.task_id, "agent": agent, "task": None,
                 "project": projects[crossing.task_id], "budget": crossing}
            )  # fmt: skip

        tx.emit_untasked(
            "usage.budget", projects[task_id], encode, task_id=task_id, prev_seq=event_seq
        )
        if holder is not None:  # after the event that says why
            _release(tx, task_id, agent, holder)
    return crossed


def _tell(tx: Txn, agent: str, person: str, crossing: BudgetCrossing, project: str) -> None:
    """The person's message that a task's budget is spent, from the reporting agent, on
    the task, in the report's transaction: it is in their inbox (`coord inbox`, `coord
    top`, `coord web`) whenever the crossing is in the log. A name never seen past its
    backlog caps is left out, as a thread's member is: the report is never refused."""
    (title,) = tx.conn.execute(
        "SELECT title FROM tasks WHERE id = ?", (crossing.task_id,)
    ).fetchone()
    body = (
        f"Task #{crossing.task_id} ({title[:200]}) has used its whole token budget:"
        f" {crossing.spent:,} of {crossing.tokens:,} tokens, counted as `coord cost` counts"
        f" them. {agent}'s model was told to stop and ask you before spending more."
    )
    if crossing.released:
        body += " Its claim was released (budget_release): the task is pending again."
    recipients, unseen = messages_unseen.admit(tx, agent, [person], None)
    insert_message(tx, project=project, sender=agent, kind="message", audience="agent",
                   recipients=recipients, body=body, to=person, task_id=crossing.task_id,
                   unseen=unseen)  # fmt: skip


def _holder(tx: Txn, task_id: int) -> str | None:
    """Who holds the task now (None: done, failed or handed back: nothing to release)."""
    held = tx.conn.execute(
        "SELECT claimed_by FROM tasks WHERE id = ? AND state = 'claimed'", (task_id,)
    ).fetchone()
    return None if held is None else str(held[0])


def _release(tx: Txn, task_id: int, agent: str, holder: str) -> None:
    """The task's claim back to pending: `task.released` by the reporting agent, `of` the
    holder (as `agent.release` says it), in this transaction; its reservations end with
    it (`Txn.emit`)."""
    row = one_row(
        tx.conn,
        f"UPDATE tasks SET state = 'pending', {CLEAR_CLAIM}, updated_at = ? WHERE id = ?"
        f" RETURNING {ROW_COLUMNS}",
        (tx.now_text, task_id),
    )
    assert row is not None
    tx.emit("task.released", row, agent, of=holder, reason="its token budget is spent")


def _projects(conn: Db, tasks: set[int]) -> dict[int, str]:
    if not tasks:
        return {}
    args: dict[str, Any] = {}
    ids = in_list("t", sorted(tasks), args)
    return dict(conn.execute(f"SELECT id, project FROM tasks WHERE id IN {ids}", args).fetchall())


_SUMS = ", ".join(f"CAST(COALESCE(SUM({kind}), 0) AS BIGINT)" for kind in KINDS)


def query(conn: Db, p: U.CostQueryParams) -> CostResult:
    """The charges matching every filter given, summed per (task, agent, model), the
    unattributed last; and their totals."""
    clauses: list[str] = []
    args: dict[str, Any] = {}
    for column, value in (
        ("project", p.project), ("task_id", p.task_id), ("agent", p.agent), ("model", p.model)
    ):  # fmt: skip
        if value is not None:
            clauses.append(f"{column} = :{column}")
            args[column] = value
    if p.since is not None:
        clauses.append("at >= :since")
        args["since"] = instant(p.since)
    if p.until is not None:
        clauses.append("at < :until")
        args["until"] = instant(p.until)
    where_time = p.since is not None or p.until is not None
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    limit = U.DEFAULT_COST_LIMIT if p.limit is None else p.limit
    found = conn.execute(
        f"SELECT task_id, agent, model, {_SUMS}, COUNT(*) FROM usage_charges{where}"
        " GROUP BY task_id, agent, model"
        f" ORDER BY task_id IS NULL, task_id, agent, model LIMIT {limit + 1}",
        args,
    ).fetchall()
    rows = [
        CostRow(task_id=row[0], agent=row[1], model=row[2],
                **dict(zip(KINDS, row[3:7], strict=True)), entries=row[7])
        for row in found[:limit]
    ]  # fmt: skip
    total = conn.execute(f"SELECT {_SUMS} FROM usage_charges{where}", args).fetchone()
    totals = Tokens(**dict(zip(KINDS, total, strict=True)))
    tasks = sorted({row.task_id for row in rows if row.task_id is not None})
    if p.task_id is not None and p.task_id not in tasks:
        tasks.append(p.task_id)  # its budget shows before anything is spent on it
    elif p.task_id is None and p.project is not None and not (p.agent or p.model or where_time):
        # The whole project's ledger (a board's COST column): its budgets, spent or not.
        unspent = conn.execute(
            "SELECT b.task_id FROM task_budgets AS b JOIN tasks AS t ON t.id = b.task_id"
            f" WHERE t.project = :project ORDER BY b.task_id DESC LIMIT {limit}",
            {"project": p.project},
        ).fetchall()
        tasks = sorted({*tasks, *(row[0] for row in unspent)})
    return CostResult(
        rows=rows, totals=totals, more=len(found) > limit, budgets=_budgets(conn, tasks)
    )


def _budgets(conn: Db, tasks: list[int]) -> list[Budget]:
    if not tasks:
        return []
    args: dict[str, Any] = {}
    ids = in_list("t", tasks, args)
    found = conn.execute(
        f"SELECT b.task_id, b.tokens, (SELECT CAST(COALESCE(SUM({_SPENT}), 0) AS BIGINT)"
        " FROM usage_charges AS c WHERE c.task_id = b.task_id)"
        f" FROM task_budgets AS b WHERE b.task_id IN {ids} ORDER BY b.task_id",
        args,
    ).fetchall()
    return [Budget(task_id=t, tokens=tokens, spent=spent) for t, tokens, spent in found]

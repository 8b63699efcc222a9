"""docs/PROTOCOL-1.2.md section 15 on the store (`store/usage.py`, `store/attribution.py`):
a usage entry counted once, charged to what its agent held when it was spent (one
task, several split evenly, none, a hand-over, a claim in the report's own write
group), the walk back bounded, budgets warned once, and the bounds refused as -32602.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from coordd.store import attribution, claims, group, transaction, usage, writes
from coordd.store.usage import split
from coordd_wire.errors import InvalidParams
from coordd_wire.params import ClaimParams, PostParams
from coordd_wire.params_usage import UsageEntry, UsageReportParams
from coordd_wire.wire_usage import CostRow
from store.board import Board, Seat

pytestmark = pytest.mark.both_backends

PROJECT = "/repo"


def seat(board: Board, agent: str) -> Seat:
    return board.seat(agent, PROJECT)


def entry(key: str, at: str, model: str = "claude-x", **tokens: int) -> dict[str, Any]:
    return {"id": key, "at": at, "model": model, **tokens}


def tick(board: Board) -> str:
    """An instant between two writes, as a transcript writes it: the board's clock a
    second on, and a second on again for the next write (an event at the very instant
    of an entry counts as before it)."""
    board.clock.advance(1)
    at = board.now_text
    board.clock.advance(1)
    return at


def charged(client: Seat, **filters: Any) -> dict[int | None, tuple[int, int, int, int]]:
    """{task: (input, output, cache_creation, cache_read)} over every row matched."""
    out: dict[int | None, tuple[int, int, int, int]] = {}
    for row in client.cost(**filters).rows:
        was = out.get(row.task_id, (0, 0, 0, 0))
        out[row.task_id] = tuple(a + b for a, b in zip(was, _counts(row), strict=True))  # type: ignore[assignment]
    return out


def _counts(row: CostRow) -> tuple[int, int, int, int]:
    return (row.input, row.output, row.cache_creation, row.cache_read)


def test_an_entry_reported_twice_is_counted_once(board: Board) -> None:
    with seat(board, "a") as a:
        at = tick(board)
        first = a.report_usage("claude", [entry("m1:r1", at, input=10, output=5)])
        assert (first.recorded, first.duplicates) == (1, 0)
        again = a.report_usage(
            "claude",
            [
                entry("m1:r1", at, input=10, output=5),  # a retried report
                entry("m2:r2", at, input=1, cache_read=100),
                entry("m2:r2", at, input=1, cache_read=100),  # twice in one report
            ],
        )
        assert (again.recorded, again.duplicates) == (1, 2)
        none_new = a.report_usage("claude", [entry("m2:r2", at, input=1)])
        assert (none_new.recorded, none_new.duplicates, none_new.seq) == (0, 1, None)
        # Another host's id space: the same id is another call.
        assert a.report_usage("codex", [entry("m1:r1", at, output=2)]).recorded == 1
        totals = a.cost().totals
        assert (totals.input, totals.output, totals.cache_read) == (11, 7, 100)
        # One event per report that recorded anything, none for the all-duplicate one.
        events = a.events_since(types=["usage.reported"]).events
        assert [(e.usage.recorded, e.usage.tokens) for e in events if e.usage] == [
            (1, 15), (1, 101), (1, 2),
        ]  # fmt: skip
        assert all(e.task is None and e.agent == "a" for e in events)


def test_an_entry_is_charged_to_the_one_task_its_agent_held(board: Board) -> None:
    with seat(board, "a") as a, seat(board, "b") as b:
        task = a.post("parser").task
        before = tick(board)
        a.claim(task.id)
        during = tick(board)
        b_task = b.post("lexer").task
        b.claim(b_task.id)
        a.report_usage(
            "claude",
            [entry("e1", before, input=3), entry("e2", during, input=4, output=6)],
        )
        assert charged(a) == {task.id: (4, 6, 0, 0), None: (3, 0, 0, 0)}
        assert charged(a, task_id=task.id) == {task.id: (4, 6, 0, 0)}
        assert charged(a, task_id=b_task.id) == {}


def test_an_entry_is_split_evenly_across_held_tasks_the_remainder_to_the_lowest_ids(
    board: Board,
) -> None:
    assert split(7, 3) == [3, 2, 2] and split(2, 3) == [1, 1, 0] and split(9, 3) == [3, 3, 3]
    with seat(board, "a") as a:
        first, second, third = (a.post(f"t{i}").task for i in range(3))
        for task in (third, first, second):  # claimed in any order: split by id
            a.claim(task.id)
        at = tick(board)
        result = a.report_usage(
            "claude", [entry("e", at, input=7, output=2, cache_creation=3, cache_read=10)]
        )
        assert [c.task_id for c in result.charges] == [first.id, second.id, third.id]
        assert charged(a) == {
            first.id: (3, 1, 1, 4),
            second.id: (2, 1, 1, 3),
            third.id: (2, 0, 1, 3),
        }
        totals = a.cost().totals
        assert (totals.input, totals.output, totals.cache_creation, totals.cache_read) == (
            7, 2, 3, 10,
        )  # fmt: skip
        rows = a.cost().rows
        assert all(row.entries == 1 for row in rows)


def test_an_agent_holding_nothing_is_charged_as_unattributed(board: Board) -> None:
    with seat(board, "a") as a:
        result = a.report_usage("claude", [entry("e", tick(board), output=9)])
        assert [(c.task_id, c.output) for c in result.charges] == [(None, 9)]
        (row,) = a.cost().rows
        assert (row.task_id, row.agent, row.model, row.output) == (None, "a", "claude-x", 9)


def test_a_hand_over_moves_the_charging_with_the_claim(board: Board) -> None:
    with seat(board, "a") as a, seat(board, "b") as b:
        task = a.post("parser").task
        a.claim(task.id)
        a_held = tick(board)
        a.release(task.id, assignee="b")
        between = tick(board)
        b.claim(task.id)
        b_held = tick(board)
        # Reported late, after the hand-over: charged by when each was spent.
        a.report_usage("claude", [entry("a1", a_held, input=1), entry("a2", b_held, input=10)])
        b.report_usage(
            "claude", [entry("b1", a_held, input=100), entry("b2", between, input=1000),
                       entry("b3", b_held, input=10000)],
        )  # fmt: skip
        assert charged(a, agent="a") == {task.id: (1, 0, 0, 0), None: (10, 0, 0, 0)}
        assert charged(a, agent="b") == {task.id: (10000, 0, 0, 0), None: (1100, 0, 0, 0)}


def test_an_entry_spent_before_the_claim_ended_is_charged_after_it_ended(board: Board) -> None:
    with seat(board, "a") as a, seat(board, "c") as c:
        done, cancelled = a.post("done").task, a.post("cancelled").task
        a.claim(done.id)
        a.claim(cancelled.id)
        both = tick(board)
        a.complete(done.id)
        one = tick(board)
        c.cancel(cancelled.id)  # by someone else: its holder found on the task's history
        after = tick(board)
        a.report_usage(
            "claude",
            [entry("x", both, input=4), entry("y", one, input=5), entry("z", after, input=6)],
        )
        assert charged(a) == {done.id: (2, 0, 0, 0), cancelled.id: (7, 0, 0, 0), None: (6, 0, 0, 0)}


def test_cost_filters_by_model_agent_and_time(board: Board) -> None:
    with seat(board, "a") as a, seat(board, "b") as b:
        early = tick(board)
        a.report_usage("claude", [entry("1", early, model="opus", input=1)])
        late = tick(board)
        b.report_usage("claude", [entry("2", late, model="sonnet", input=2)])
        assert a.cost(model="opus").totals.input == 1
        assert a.cost(agent="b").totals.input == 2
        assert a.cost(since=late).totals.input == 2
        assert a.cost(until=late).totals.input == 1
        limited = a.cost(limit=1)
        assert len(limited.rows) == 1 and limited.more and limited.totals.input == 3
        # Instants with another offset mean the same moment.
        assert a.cost(since=late.replace("Z", "+00:00")).totals.input == 2


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"entries": []}, "length >= 1"),
        ({"entries": [entry(str(i), "2026-01-01T00:00:00Z") for i in range(257)]}, "length <= 256"),
        ({"entries": [entry("e", "2026-01-01T00:00:00Z", input=-1)]}, ">= 0"),
        ({"entries": [entry("e", "2026-01-01T00:00:00Z", output=100_000_001)]}, "<= 100000000"),
        ({"entries": [entry("e", "yesterday")]}, "entries[0].at"),
        ({"entries": [entry("e", "2026-13-01T00:00:00Z")]}, "not a valid instant"),
        ({"entries": [entry("e", "0001-01-01T00:00:00+01:00")]}, "not a valid instant"),
        ({"entries": [entry("bad id", "2026-01-01T00:00:00Z")]}, "entries[0].id"),
        ({"host": "Claude Code"}, "$.host"),
        ({"entries": [{**entry("e", "2026-01-01T00:00:00Z"), "price": 1}]}, "price"),
    ],
)
def test_a_report_out_of_bounds_is_refused_with_invalid_params(
    board: Board, change: dict[str, Any], words: str
) -> None:
    params = {"agent": "a", "project": PROJECT, "host": "claude", "entries": [], **change}
    with seat(board, "a") as a, pytest.raises(InvalidParams) as refused:
        a.call_raw("usage.report", params)
    assert refused.value.code == -32602
    assert words in refused.value.message
    assert a.cost().totals.input == 0


def test_a_budget_is_warned_once_at_80_and_once_at_100_percent(board: Board) -> None:
    with seat(board, "a") as a:
        task = a.post("bounded", budget=100).task
        free = a.post("unbounded").task
        # Named by task_id, a budget shows before anything is charged (issue 48 review).
        (unspent,) = a.cost(task_id=task.id).budgets
        assert (unspent.task_id, unspent.tokens, unspent.spent) == (task.id, 100, 0)
        # And in the whole project's ledger (a board's COST column), not in a narrowed one.
        assert [b.task_id for b in a.cost(project=PROJECT).budgets] == [task.id]
        assert a.cost(project=PROJECT, model="claude-x").budgets == []
        a.claim(task.id)
        steps = [(70, []), (15, [80]), (5, []), (20, [100]), (50, [])]
        for index, (tokens, crossed) in enumerate(steps):
            result = a.report_usage("claude", [entry(f"b{index}", tick(board), input=tokens)])
            assert [c.threshold for c in result.budgets] == crossed
        a.claim(free.id)  # now it holds two: half of each call is the bounded task's
        a.report_usage("claude", [entry("split", tick(board), output=10)])
        (budget,) = a.cost(task_id=task.id).budgets
        assert (budget.task_id, budget.tokens, budget.spent) == (task.id, 100, 165)
        assert a.cost(task_id=free.id).budgets == []
        # On the task's history, where a caller names the type.
        history = a.events_since(task_id=task.id, types=["task.claimed", "usage.budget"]).events
        crossings = [e.budget for e in history if e.type == "usage.budget"]
        assert [(c.threshold, c.spent) for c in crossings if c] == [(80, 85), (100, 110)]
        assert history[0].type == "task.claimed"


def _post_many(tx: transaction.Txn, count: int) -> None:
    for index in range(count):
        writes.post_task(tx, PostParams(title=f"noise {index}", project=PROJECT, agent="z"))


def test_the_walk_back_crosses_windows_of_other_events_and_stops_at_its_cap(
    board: Board,
) -> None:
    with seat(board, "a") as a:
        task = a.post("held").task
        a.claim(task.id)
        held = tick(board)
        board.run(_post_many, 2500)  # more events than one window of seqs
        a.complete(task.id)
        after = tick(board)
        board.run(_post_many, 2500)
        now = board.now_text
        instants = [held, after]
        assert board.read(attribution.held_at, "a", instants, now) == [(task.id,), ()]
        # Past the cap the instant is unknown: unattributed, not guessed.
        capped = partial(attribution.held_at, limit=3000)
        assert board.read(capped, "a", instants, now) == [None, ()]
        result = a.report_usage("claude", [entry("late", held, input=5)])
        assert [(c.task_id, c.input) for c in result.charges] == [(task.id, 5)]


def test_the_writer_walks_only_what_was_committed_since_the_readers_walk(
    board: Board,
) -> None:
    """A report's long walk is a reader's; the writer reads the log only above the
    reader's snapshot, at most `usage_attribution_writer_events` of it, and takes the
    reader's answer for an instant older than all of that."""
    with seat(board, "a") as a:
        task = a.post("held").task
        a.claim(task.id)
        held = tick(board)
        board.run(_post_many, 2500)
        now = board.now_text
        walked = board.read(attribution.walk_on_reader, "a", [held], now)
        assert walked.answers == {held: (task.id,)}
        # The writer takes the reader's answer as it stands: it never walks below it.
        told = attribution.Walked(walked.last_seq, {held: (999,)})
        assert board.read(partial(attribution.held_at, walked=told), "a", [held], now) == [(999,)]
        board.run(_post_many, 300)  # committed after the reader's walk
        capped = partial(attribution.held_at, walked=walked, limit=100)
        assert board.read(capped, "a", [held], board.now_text) == [None]
        enough = partial(attribution.held_at, walked=walked, limit=1000)
        assert board.read(enough, "a", [held], board.now_text) == [(task.id,)]


def test_a_claim_in_the_same_write_group_as_the_report_counts_from_its_instant(
    board: Board,
) -> None:
    """The group stores its events at its end: the claim's row is already changed when
    the report runs, and its event must count too, or the earlier call is its task's."""
    with seat(board, "a") as a:
        task = a.post("raced").task
        before = tick(board)
        claim = ClaimParams(id=task.id, agent="a")
        report = UsageReportParams(
            agent="a", project=PROJECT, host="claude",
            entries=[UsageEntry(id="early", at=before, model="m", input=9)],
        )  # fmt: skip
        walked = board.read(usage.walk, report, board.now_text)
        done = board.group(
            group.Call(claims.claim_task, (claim,)), group.Call(usage.report, (report, walked))
        )
        assert [error for _, error in done.results] == [None, None]
        assert charged(a) == {None: (9, 0, 0, 0)}


def test_a_task_that_asks_for_it_is_released_when_its_budget_is_spent(board: Board) -> None:
    with seat(board, "a") as a, seat(board, "b") as b:
        task = a.post("bounded", budget=100, budget_release=True).task
        reserved = a.claim(task.id).task
        a.reserve(["src/**"], task_id=task.id)
        crossed = a.report_usage("claude", [entry("over", tick(board), input=120)]).budgets
        assert [(c.threshold, c.released) for c in crossed] == [(100, True)]
        now = b.get(task.id).task
        assert (now.state, now.claimed_by, now.fence) == ("pending", None, reserved.fence)
        assert a.reservations().reservations == []  # ended with the claim
        types = ["usage.budget", "task.released"]
        history = a.events_since(task_id=task.id, types=types).events
        assert [(e.type, e.of, e.reason) for e in history] == [
            ("usage.budget", None, None),
            ("task.released", "a", "its token budget is spent"),
        ]
        # What a spends now is its own, not the task's.
        a.report_usage("claude", [entry("after", tick(board), input=7)])
        assert charged(a, agent="a") == {task.id: (120, 0, 0, 0), None: (7, 0, 0, 0)}
        with pytest.raises(InvalidParams, match="needs a `budget`"):
            a.post("no budget", budget_release=True)

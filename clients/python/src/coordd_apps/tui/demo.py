"""A fixed board, for the README's screenshot (`scripts/screenshot_top.py`) and the
snapshot tests: the same picture every time, with no daemon and no clock."""

from __future__ import annotations

from datetime import UTC, datetime

from coordd_apps.cost_view import Costs
from coordd_apps.tui.app import TopApp
from coordd_wire.wire import AgentInfo, Event, Reservation, Task
from coordd_wire.wire_messages import Message, RequestState

NOW = datetime(2026, 12, 1, 14, 0, 0, tzinfo=UTC)


def _at(minutes_ago: float) -> str:
    moment = NOW.timestamp() - minutes_ago * 60
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="microseconds")[:-6] + "Z"


def _task(task_id: int, title: str, **fields: object) -> Task:
    base: dict[str, object] = {
        "id": task_id, "project": "/home/ada/shop", "kind": "task", "title": title, "body": "",
        "state": "pending", "priority": 0, "tags": [], "created_by": "claude-3cda0b494380",
        "created_at": _at(40), "updated_at": _at(30), "claimed_by": None, "claimed_at": None,
        "lease_expires_at": None, "fence": 0, "attempts": 0, "result": None,
    }  # fmt: skip
    base.update(fields)
    return Task(**base)  # type: ignore[arg-type]


TASKS = [
    _task(1, "write the orders migration", state="claimed", claimed_by="codex-019d1afbb2c7",
          claimed_at=_at(12), lease_expires_at=_at(-7.5), fence=1, attempts=1, priority=5,
          updated_at=_at(12)),
    _task(2, "switch reads to the new table", depends_on=[1], blocked_by=[1], priority=4),
    _task(3, "drop the old column", depends_on=[2], blocked_by=[2], priority=3,
          assignee="claude-3cda0b494380"),
    _task(4, "login fails with a + in the email", kind="bug", priority=8, state="claimed",
          claimed_by="claude-3cda0b494380", claimed_at=_at(3), lease_expires_at=_at(-9.2),
          fence=2, attempts=2, updated_at=_at(3)),
    _task(5, "review the checkout copy", kind="question", assignee="cursor-shop",
          updated_at=_at(1)),
    _task(6, "flaky test_refund_rounding", kind="bug", state="failed", priority=2,
          claimed_by="cursor-shop", result="cannot reproduce here", updated_at=_at(6)),
]  # fmt: skip
AGENTS = [
    AgentInfo(agent="claude-3cda0b494380", last_seen=_at(0.2), holding=1),
    AgentInfo(agent="codex-019d1afbb2c7", last_seen=_at(0.5), holding=1),
    AgentInfo(agent="cursor-shop", last_seen=_at(14), holding=0),
    # Not shown (coordd_client.presence): at work on another repository; gone for a day.
    AgentInfo(agent="codex-elsewhere", last_seen=_at(1), holding=0),
    AgentInfo(agent="claude-closed-tab", last_seen=_at(24 * 60), holding=0),
]
RESERVATIONS = [
    Reservation(id=7, project="/home/ada/shop", agent="claude-3cda0b494380",
                pattern="src/auth/**", exclusive=True, reason="login fix", task_id=4,
                created_at=_at(3), expires_at=_at(-57), ttl_s=3600),
    Reservation(id=8, project="/home/ada/shop", agent="codex-019d1afbb2c7",
                pattern="migrations/*.sql", exclusive=True, reason=None, task_id=1,
                created_at=_at(12), expires_at=_at(-48), ttl_s=3600),
]  # fmt: skip


def _event(seq: int, minutes_ago: float, type_: str, task: Task, agent: str) -> Event:
    return Event(seq=seq, at=_at(minutes_ago), type=type_, task_id=task.id, agent=agent,  # type: ignore[arg-type]
                 task=task)  # fmt: skip


#: The feed: the latest few changes to the board above, oldest first.
EVENTS = [
    _event(41, 12, "task.claimed", TASKS[0], "codex-019d1afbb2c7"),
    _event(42, 6, "task.failed", TASKS[5], "cursor-shop"),
    _event(43, 3, "task.claimed", TASKS[3], "claude-3cda0b494380"),
    _event(44, 1, "task.assigned", TASKS[4], "claude-3cda0b494380"),
]


#: The human's inbox (the Messages pane): an open release request first, as
#: `tui/messages.inbox` orders them, then a question and a plain note.
MESSAGES = [
    Message(id=12, project="/home/ada/shop", sender="codex-019d1afbb2c7", kind="request",
            audience="agent", to="human-ada", task_id=None, reply_to=None,
            body="I need src/auth/** to move the session check into the middleware "
                 "before the migration lands", created_at=_at(2), seq=45, open=True,
            request=RequestState(holder="human-ada", patterns=["src/auth/**"], task_id=None,
                                 status="open", expires_at=_at(-8))),
    Message(id=9, project="/home/ada/shop", sender="claude-3cda0b494380", kind="question",
            audience="agent", to="human-ada", task_id=4, reply_to=None,
            body="Should a + in the local part be kept when we normalise emails?",
            created_at=_at(5), seq=40, open=True),
    Message(id=7, project="/home/ada/shop", sender="cursor-shop", kind="message",
            audience="agent", to="human-ada", task_id=6, reply_to=None,
            body="test_refund_rounding passes 200 times in a row here; leaving it failed",
            created_at=_at(7), seq=38),
]  # fmt: skip
#: Files edited in two or more worktrees lately (the status line's last word).
EDITED_ELSEWHERE = 2
#: Tokens charged so far (issue 48): #4 past 80% of its budget, #6 past all of it.
COSTS = Costs(
    tasks={1: 412_300, 4: 1_730_000, 6: 2_150_000},
    agents={"codex-019d1afbb2c7": 412_300, "claude-3cda0b494380": 1_730_000,
            "cursor-shop": 2_150_000},
    budgets={4: 2_000_000, 6: 2_000_000},
)  # fmt: skip


def show(app: TopApp) -> None:
    """This board in `app`, as the snapshot tests and docs/top.svg show it."""
    app.show_fixed(
        TASKS, AGENTS, RESERVATIONS, EVENTS, inbox=MESSAGES,
        edited_elsewhere=EDITED_ELSEWHERE, costs=COSTS,
    )  # fmt: skip

"""`coord export`'s Markdown from one read of the event log is byte for byte the Markdown
built task by task (each task's history, thread and budget crossings asked for apart, as
`--task` still does), on a board with every kind of event, for every project, one
project and a time range."""

from __future__ import annotations

from datetime import UTC, datetime
from io import BytesIO
from typing import Any

import msgspec
import pytest

from coordd_apps import export as trail
from coordd_apps.cost_report import task_costs
from coordd_apps.markdown_text import code
from coordd_client import Client
from coordd_client.paging import task_history
from coordd_wire.wire import EVENT_TYPES, FEATURE_OF_EVENT, Event, served_event_types
from coordd_wire.wire_messages import MessageEvent
from support import DaemonProcess, coord

SHOP = "/home/ada/shop"
LAB = "/home/ada/lab"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _per_task(client: Client, *, project: str | None, span: trail.Range) -> bytes:
    """The Markdown as built task by task: three reads a task, then a pass over the
    events with no task. The reference the one pass must equal."""
    out = BytesIO()
    scope = f"project {code(project)}" if project else "every project"
    ends = f"from {span.since.isoformat() if span.since else 'the start'} to "
    ends += span.until.isoformat() if span.until else "now"
    out.write(f"# coord audit trail: {scope}\n\n{ends}\n\n".encode())
    costs = task_costs(client, project=project, task_id=None)
    for task in trail.every_task(client, project=project):
        events = trail.in_range(task_history(client, task.id), span)
        messages = [m for m in trail.thread(client, task.id) if span.admits(m.at)]
        crossings = trail.in_range(trail.budget_crossings(client, task.id), span)
        if not events and not messages and not crossings and (span.since or span.until):
            continue
        out.write(
            trail.task_section(task, events, messages, costs.get(task.id), crossings).encode()
        )
    types = [t for t in served_event_types(client.server_info().features) if t in FEATURE_OF_EVENT]
    lines = []
    for raw in trail.raw_events(client, project=project, types=types):
        if raw_type(raw) == "message.sent":
            sent = _decode(raw, MessageEvent)
            if sent.message.task_id is None and span.admits(sent.at):
                lines.append(trail.message_step(sent))
            continue
        event = _decode(raw, Event)
        if event.type != "usage.budget" and span.admits(event.at):
            lines.append(trail.board_step(event))
    if lines:
        out.write(b"## Board events\n\n")
        out.write(b"Landings, slots and ports, messages off a task's thread, file edits.\n\n")
        out.write("".join(line + "\n" for line in lines).encode() + b"\n")
    return out.getvalue()


def raw_type(raw: msgspec.Raw) -> str:
    return str(msgspec.json.decode(raw)["type"])


def _decode(raw: msgspec.Raw, kind: type[Any]) -> Any:
    return msgspec.json.decode(raw, type=kind)


def _usage(key: str, tokens: int) -> dict[str, Any]:
    return {"id": key, "at": _now(), "model": "claude-sonnet-4-5", "input": tokens}


def _fill(daemon: DaemonProcess) -> str:
    """Every kind of event on two projects; returns an instant between its two halves."""
    with (
        Client(daemon.socket_path, agent="claude-1", project=SHOP) as claude,
        Client(daemon.socket_path, agent="codex-2", project=SHOP) as codex,
        Client(daemon.socket_path, agent="codex-2", project=LAB) as lab,
    ):
        done = claude.post("# parse *dates*", body="```\nfence\n```", kind="bug", priority=2,
                           tags=["ui", "db"]).task  # fmt: skip
        won = codex.claim(done.id).task
        codex.send_message("which format?", task_id=done.id, kind="question")
        lab.send_message("from the lab, on the shop's task", task_id=done.id)
        codex.complete(done.id, fence=won.fence, result="fixed in abc123\nsecond line")
        failed = claude.post("flaky test").task
        codex.claim(failed.id)
        codex.fail(failed.id, reason="cannot reproduce", retry=True)
        codex.claim(failed.id)
        codex.release(failed.id, assignee="claude-1")
        claude.claim(failed.id)
        claude.fail(failed.id, reason="gave up")
        claude.reopen(failed.id)
        dep = claude.post("after the parser", depends_on=[done.id], assignee="codex-2").task
        claude.assign(dep.id, None)
        step = claude.post("first step").task
        claude.post("second step", depends_on=[step.id])
        codex.claim(step.id)
        codex.complete(step.id)  # the second step unblocked...
        claude.reopen(step.id)  # ...and blocked again
        claude.cancel(dep.id, reason="not needed")
        budget = claude.post("big one", budget=100).task
        codex.claim(budget.id)
        codex.report_usage("claude", [_usage("1", 300)])
        lab.post("lab work", agent="codex-2")
        middle = _now()
        claude.reserve(["src/a.py"])
        asked = codex.request_release(patterns=["src/a.py"], body="need it")
        claude.answer_request(asked.request.id, "approve", reason="take it")
        claude.send_message("x" * 300 + "\nlong", to="codex-2")
        codex.acquire_slot("migrations")
        codex.lease_port("dev-server")
        queued = codex.enqueue_landing("feature-x", "main", ["src/a.py"]).landing
        codex.start_landing(queued.id)
        codex.finish_landing(queued.id, "landed", commit="0123456789abcdef" * 2 + "01234567")
        claude.reserve(["src/b.py"])
        blocked = codex.enqueue_landing("feature-y", "main", ["src/b.py"]).landing
        codex.start_landing(blocked.id)
        codex.finish_landing(blocked.id, "failed", reason="tests red")
        codex.record_edit(["src/a.py"], ["h1"], worktree="/home/ada/shop-wt")
        late = claude.post("late task").task
        claude.send_message("on the late task", task_id=late.id)
        codex.claim(late.id)
        codex.complete(late.id, result="ok")
        lab.send_message("a lab note")
    return middle


@pytest.mark.parametrize("ranged", [False, True])
def test_the_one_pass_markdown_equals_the_per_task_markdown(
    daemon: DaemonProcess, ranged: bool
) -> None:
    middle = _fill(daemon)
    with daemon.client() as client:
        stored = {raw_type(raw) for raw in trail.raw_events(client)}
        # Every type but the expiry (a lapsed lease: the reaper's clock, not this test's).
        assert stored == set(EVENT_TYPES) - {"task.expired"}, set(EVENT_TYPES) - stored
        span = trail.Range(trail.parse_moment(middle)) if ranged else trail.Range()
        for project in (None, SHOP, LAB):
            want = _per_task(client, project=project, span=span)
            scope = ["--project", project] if project else []
            args = [*scope, "export", "--since", middle] if ranged else [*scope, "export"]
            done = coord(*args, *([] if project else ["--all-projects"]), socket=daemon.socket_path)
            assert done.returncode == 0, done.stderr
            assert done.stdout.encode() == want, project
            if project is None:  # not an empty comparison
                assert want.count(b"\n## #") >= (1 if ranged else 5) and b"## Board events" in want

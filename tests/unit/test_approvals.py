"""What an approval approves (issue 47 item 3): the words every sign-off shows, from the
wire records alone (the web's confirm pages and `coord top`'s dialogs use these)."""

from __future__ import annotations

import msgspec

from coordd_apps import approvals
from coordd_wire.wire import Reservation, Task
from coordd_wire.wire_messages import Message

AT = "2026-12-02T13:36:00.000000Z"


def gate(**fields: object) -> Task:
    record = {
        "id": 6, "project": "/home/ada/shop", "title": "ship 1.4?", "body": "The backup ran.",
        "kind": "task", "priority": 0, "tags": [], "state": "pending", "created_by": "codex-2",
        "assignee": "human-ada", "claimed_by": None, "lease_expires_at": None, "claimed_at": None,
        "fence": 0, "attempts": 0, "result": None, "created_at": AT, "updated_at": AT,
        "depends_on": [], "blocked_by": [], **fields,
    }  # fmt: skip
    return msgspec.convert(record, Task)


def request(patterns: list[str] | None, task_id: int | None = None) -> Message:
    record = {
        "id": 9, "project": "/home/ada/shop", "sender": "claude-7", "kind": "request",
        "audience": "agent", "to": "human-ada", "task_id": task_id, "reply_to": None,
        "body": "I need the migrations", "created_at": AT, "seq": 40, "open": True,
        "request": {"holder": "human-ada", "patterns": patterns, "task_id": task_id,
                    "status": "open", "expires_at": AT},
    }  # fmt: skip
    return msgspec.convert(record, Message)


def test_a_gate_is_named_by_its_title_and_asker() -> None:
    assert approvals.gate_question("approve", gate()) == (
        'Approve gate #6 "ship 1.4?", asked by codex-2?'
    )
    assert approvals.gate_question("reject", gate(), "not today") == (
        'Reject gate #6 "ship 1.4?", asked by codex-2 because not today?'
    )
    assert approvals.gate_facts(gate(tags=["release"])) == [
        ("gate", "#6 ship 1.4?"),
        ("question", "The backup ran."),
        ("asked by", "codex-2"),
        ("project", "/home/ada/shop"),
        ("tags", "release"),
    ]
    assert approvals.gate_result("human-ada", gate()) == 'approved by human-ada: "ship 1.4?"'


def test_a_release_request_is_named_by_its_paths_requester_and_holder() -> None:
    asked = request(["src/db/**", "migrations/*.sql"])
    assert approvals.request_question("approve", asked) == (
        "Approve release request #9: hand src/db/**, migrations/*.sql from human-ada over"
        " to claude-7?"
    )
    assert approvals.request_question("deny", asked, reason="mid-refactor") == (
        "Deny release request #9: src/db/**, migrations/*.sql stay with human-ada, not"
        " handed over to claude-7 (mid-refactor)?"
    )
    assert approvals.request_question("narrow", asked, ["src/db/**"]) == (
        "Narrow release request #9: hand only src/db/** of src/db/**, migrations/*.sql"
        " from human-ada over to claude-7?"
    )
    facts = dict(approvals.request_facts(asked))
    assert facts["requester"] == "claude-7" and facts["held by"] == "human-ada"
    assert facts["reason"] == "I need the migrations"


def test_a_claim_asked_for_is_named_by_its_task() -> None:
    assert approvals.request_question("approve", request(None, task_id=4)) == (
        "Approve release request #9: hand task #4 from human-ada over to claude-7?"
    )


def test_the_reason_sent_is_the_persons_own_words() -> None:
    asked = request(["src/db/**"])
    # The daemon's answer says what was decided (a deny: what stays where); the
    # reason is the person's words only, so the tab never reads it twice.
    assert approvals.answer_reason("deny", asked, "mid-refactor") == "mid-refactor"
    assert approvals.answer_reason("deny", asked) is None
    assert approvals.answer_reason("approve", asked, "") is None
    assert approvals.answer_reason("approve", asked, "go") == "go"


def held(agent: str, pattern: str, project: str = "/home/ada/shop") -> Reservation:
    record = {
        "id": 1, "project": project, "agent": agent, "pattern": pattern, "exclusive": True,
        "reason": None, "task_id": None, "created_at": AT, "expires_at": AT, "ttl_s": 3600.0,
    }  # fmt: skip
    return msgspec.convert(record, Reservation)


def test_an_approval_says_what_else_of_the_holders_it_ends() -> None:
    """A pattern ends whole (docs/MESSAGES.md): approving `src/db/schema.py` out of the
    human's `src/db/**` gives up all of `src/db/**`, and the sign-off says so (issue 47
    item 3: `coord answer` said it afterwards; top and the web said nothing)."""
    asked = request(["src/db/schema.py"])
    live = [
        held("human-ada", "src/db/**"),
        held("human-ada", "docs/**"),  # no overlap: kept
        held("codex-2", "src/**"),  # not the holder's
        held("human-ada", "src/db/**", project="/elsewhere"),  # another project
    ]
    assert approvals.ends_whole(asked, live) == ["src/db/**"]
    facts = dict(approvals.request_facts(asked, ["src/db/**"]))
    assert facts["also ends"] == (
        "human-ada's src/db/** (a reservation ends whole: re-reserve what is still needed)"
    )
    # What is handed over as it is held ends nothing else; a narrowing is judged by its
    # own patterns; a claim asked for has no paths; a bad narrowing is the daemon's to refuse.
    assert approvals.ends_whole(request(["src/db/**"]), live) == []
    assert approvals.ends_whole(request(["src/db/**"]), live, ["src/db/a.py"]) == ["src/db/**"]
    assert approvals.ends_whole(request(None, task_id=4), live) == []
    assert approvals.ends_whole(asked, live, ["/abs"]) == []
    assert "also ends" not in dict(approvals.request_facts(asked))

"""The one definition of an acknowledgement (`coordd_client.acks`, issue 47 item 2), alone:
what the builders send for an ack, and the ack a completion posts."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from coordd_client import acks, methods
from coordd_wire.errors import InvalidParams
from coordd_wire.wire import Task

TASK = msgspec.convert(
    {
        "id": 7, "project": "/repo", "kind": "bug", "title": "t", "body": "", "state": "claimed",
        "priority": 0, "tags": ["re:7", *(f"t{n}" for n in range(20))], "created_by": "a",
        "created_at": "x", "updated_at": "x", "claimed_by": "a", "claimed_at": "x",
        "lease_expires_at": "x", "fence": 1, "attempts": 1, "result": None,
    },
    Task,
)  # fmt: skip


def sent(call: methods.Call[Any]) -> dict[str, Any]:
    assert call.params is not None
    return call.params


def test_the_builders_post_an_ack_done_and_refuse_one_asked_pending() -> None:
    assert sent(methods.post("x", kind="ack"))["state"] == "done"
    assert sent(methods.post("x", kind="bug"))["state"] is None  # work: the daemon's default
    assert sent(methods.post("x"))["state"] is None
    done = sent(methods.complete(7, then_post={"title": "x", "kind": "ack"}))
    assert done["then_post"] == {"title": "x", "kind": "ack", "state": "done"}
    with pytest.raises(InvalidParams, match="never work") as refused:
        methods.post("x", kind="ack", state="pending")
    assert refused.value.data["field"] == "state"


def test_a_completions_ack_is_tagged_with_its_task_and_another_kind_is_left_as_work() -> None:
    ack = acks.follow_up(TASK, {"title": "landed", "tags": ["mine", "t0"]})
    assert (ack["kind"], ack["state"], ack["project"]) == ("ack", "done", "/repo")
    assert ack["tags"][:3] == ["re:7", "mine", "t0"] and len(ack["tags"]) == 16
    assert len(set(ack["tags"])) == 16
    work = acks.follow_up(TASK, {"title": "review it", "kind": "task"})
    assert work == {"title": "review it", "kind": "task"}


def test_a_keyed_follow_up_asks_no_title_a_repeat_could_be_told_by() -> None:
    """A completion's follow-up with an idempotency key may answer an older post of any
    title, so only an unkeyed follow-up's title is compared with the ack that came back."""
    assert acks.asked_ack_title({"title": "parser fixed"}) == "parser fixed"
    assert acks.asked_ack_title({"title": "parser fixed", "idempotency_key": "k1"}) is None
    assert acks.asked_ack_title(None) is None
    assert not acks.completion_repeated(
        "fixed", "an older post", asked_result="fixed",
        asked_ack=acks.asked_ack_title({"title": "parser fixed", "idempotency_key": "k1"}),
    )  # fmt: skip
    assert acks.completion_repeated(
        "fixed", "parser fixed", asked_result="fixed", asked_ack="parser fixed again"
    )

"""docs/PROTOCOL-1.2.md section 11 over a real daemon (both stores): the feature, the
events of recorded edits, and refusals on the wire. The verdicts, reserve on first
edit and stale writes on the store are tests/store/test_edits.py."""

from __future__ import annotations

from typing import Any

import pytest

from coordd_client import Client
from coordd_wire.bounds import (
    MAX_CHECK_PATHS,
    MAX_PATH_SEGMENTS,
    path_chunks,
    path_segments,
)
from coordd_wire.errors import InvalidParams
from support import DaemonProcess, RawConnection

pytestmark = pytest.mark.both_backends

PROJECT = "/repo"
MAIN, LINKED = "/repo", "/wt/b"


def tab(daemon: DaemonProcess, agent: str) -> Client:
    return Client(daemon.socket_path, agent=agent, project=PROJECT)


def test_the_feature_is_named(daemon: DaemonProcess) -> None:
    with tab(daemon, "a") as a:
        assert "file_edits" in a.server_info().features


def test_a_read_says_who_changed_the_file_since_the_last_one(daemon: DaemonProcess) -> None:
    """Issue 47 item 5: Claude Code refuses a stale write itself, before the pre-edit hook;
    the re-read it asks for is where the model learns who (once: the read is the baseline)."""
    with tab(daemon, "a") as a, tab(daemon, "b") as b:
        assert a.record_read(["src/x.py"], ["h1"], worktree=MAIN).changed == []
        b.record_edit(["src/x.py"], ["h2"], worktree=MAIN)
        again = a.record_read(["src/x.py"], ["h2"], worktree=MAIN)
        assert [(c.path, c.agent) for c in again.changed] == [("src/x.py", "b")]
        assert a.record_read(["src/x.py"], ["h2"], worktree=MAIN).changed == []
        assert b.record_read(["src/x.py"], ["h2"], worktree=MAIN).changed == []  # its own edit


def test_file_edited_events_reach_only_who_names_them(daemon: DaemonProcess) -> None:
    with tab(daemon, "a") as a:
        a.post("a task")
        a.record_edit(["src/x.py", "/repo/src/y.py"], ["h", ""], worktree=MAIN)
        a.post("after")
    conn = RawConnection(daemon.socket_path)
    try:
        every = conn.call("events.since", {"after_seq": 0})["result"]["events"]
        assert [e["type"] for e in every] == ["task.posted", "task.posted"]
        named = conn.call("events.since", {"after_seq": 0, "types": ["file.edited"]})
        (edited,) = named["result"]["events"]
        assert {k: edited[k] for k in ("type", "task_id", "agent", "worktree", "paths")} == {
            "type": "file.edited",
            "task_id": None,
            "agent": "a",
            "worktree": MAIN,
            "paths": ["src/x.py", "src/y.py"],
        }
        waited = conn.call("task.wait", {"after_seq": 1, "timeout_s": 0})["result"]
        assert waited["task"]["title"] == "after"  # a wait never matches a file event
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"paths": ["../x"]}, "paths"),
        ({"paths": ["/elsewhere/x"]}, "paths"),
        ({"worktree": "relative"}, "worktree"),
        ({"hashes": ["a", "b"]}, "hashes"),
        ({"paths": []}, "paths"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_bad_params_are_refused_by_name(
    daemon: DaemonProcess, params: dict[str, Any], field: str
) -> None:
    conn = RawConnection(daemon.socket_path)
    try:
        base = {"agent": "a", "project": PROJECT, "worktree": MAIN, "paths": ["x"]}
        error = conn.call("file.guard", {**base, **params})["error"]
        assert error["code"] == -32602 and field in error["message"] + str(error["data"])
        assert conn.call("ping")["result"] == {"pong": True}  # and the daemon serves on
    finally:
        conn.close()
    with tab(daemon, "a") as a, pytest.raises(InvalidParams):
        a.record_edit(["x"], [], worktree=MAIN)


@pytest.mark.parametrize("spelled", ["/repo/", "/repo/.", "/repo//", "/repo/./"])
def test_the_stale_verdict_names_a_worktree_however_it_is_spelled(
    daemon: DaemonProcess, spelled: str
) -> None:
    """Issue 44: the verdict keyed on the string, so `W/` and `W/.` missed what `W` caught.
    Raw calls: the daemon itself must not tell them apart (the shipped client resolves)."""
    conn = RawConnection(daemon.socket_path)

    def call(method: str, agent: str, worktree: str, **more: Any) -> dict[str, Any]:
        params = {"agent": agent, "project": PROJECT, "worktree": worktree, "paths": ["src/x.py"]}
        answer = conn.call(method, {**params, **more})
        assert "result" in answer, answer
        result: dict[str, Any] = answer["result"]
        return result

    try:
        call("file.record_read", "a", MAIN, hashes=["h1"])
        call("file.record_edit", "b", spelled, hashes=["h2"])
        for where in (MAIN, spelled):
            verdict = call("file.guard", "a", where, hashes=["h2"], auto_reserve=False)
            assert not verdict["allowed"] and [s["agent"] for s in verdict["stale"]] == ["b"]
        others = call("file.guard", "c", "/wt/b", auto_reserve=False)["others"]
        assert {o["worktree"] for o in others} == {MAIN}  # stored in its normal form
        error = conn.call(
            "file.guard",
            {"agent": "a", "project": PROJECT, "worktree": "/repo/../repo", "paths": ["src/x.py"]},
        )
        assert error["error"]["code"] == -32602 and "`..`" in error["error"]["message"]
    finally:
        conn.close()


@pytest.mark.parametrize("method", ["file.guard", "reservation.check", "file.record_read"])
def test_paths_over_the_segment_bound_are_refused_naming_it(
    daemon: DaemonProcess, method: str
) -> None:
    """Issue 44: 100 paths of 2,048 segments stalled every write for 20 s. The paths of
    one request hold at most MAX_PATH_SEGMENTS segments; past it, -32602 naming the bound."""
    deep = "/".join(["d"] * 2047)
    over = [f"{deep}/{n}" for n in range(MAX_PATH_SEGMENTS // 2048 + 1)]
    under = over[:-1]
    base: dict[str, Any] = {"agent": "a", "project": PROJECT, "worktree": MAIN}
    if method == "reservation.check":
        base = {"project": PROJECT}
    if method == "file.record_read":
        base["hashes"] = ["h"] * len(over)
    conn = RawConnection(daemon.socket_path)
    try:
        error = conn.call(method, {**base, "paths": over})["error"]
        assert error["code"] == -32602, error
        assert (
            "MAX_PATH_SEGMENTS" in error["message"] and str(MAX_PATH_SEGMENTS) in error["message"]
        )
        assert error["data"]["field"] == "paths"
        if method == "file.record_read":
            base["hashes"] = ["h"] * len(under)
        assert "result" in conn.call(method, {**base, "paths": under})
    finally:
        conn.close()


def test_the_client_sends_a_worktree_resolved() -> None:
    from coordd_client.methods_edits import file_guard, record_read

    assert file_guard(["x"], worktree="/repo/.").params["worktree"] == "/repo"  # type: ignore[index]
    assert record_read(["x"], ["h"], worktree="/repo//").params["worktree"] == "/repo"  # type: ignore[index]


def test_a_client_splits_paths_under_both_bounds() -> None:
    deep = "/".join(["d"] * 1000)
    paths = [f"{deep}/{n}" for n in range(20)] + [f"f{n}" for n in range(600)]
    chunks = path_chunks(paths)
    assert [p for chunk in chunks for p in chunk] == paths
    for chunk in chunks:
        assert len(chunk) <= MAX_CHECK_PATHS
        assert sum(map(path_segments, chunk)) <= MAX_PATH_SEGMENTS

"""Usage in (issue 48): the real `coord hook` commands, run as a host runs them, read a
synthetic transcript appended in steps and send the token ledger exactly what it says,
once, whatever the number of runs; a broken transcript changes nothing a hook answers.
"""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hook_runs import AGENT_A, SESSION_A, hook

from coordd_client import Client
from coordd_client.identity import host_agent
from support import COORD, DaemonProcess, coord_env, git_repo

CODEX_SESSION = "019d1afb-b2c7-7e21-9f00-0000000000c5"
CODEX_AGENT = host_agent("codex", CODEX_SESSION)


@pytest.fixture
def repo(workdir: Path) -> Path:
    return git_repo(workdir / "repo").resolve()


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def later() -> str:
    """A second from now: a line written after a claim, whatever the clock's grain (a
    timestamp in the claim's own millisecond would be before it)."""
    return (datetime.now(UTC) + timedelta(seconds=1)).isoformat(timespec="milliseconds")[:-6] + "Z"


def claude_line(
    message: str, request: str | None, block: int, at: str | None = None, **usage: int
) -> str:
    """One assistant line: Claude Code writes one per content block of a response
    (2.1.332 writes no `requestId`: `request` None). Stamped a second from now unless
    `at` says: every test writes its lines after the claim they are charged to."""
    line = {
        "type": "assistant", "uuid": f"{message}-{block}", "requestId": request,
        "timestamp": at or later(), "sessionId": SESSION_A,
        "message": {"id": message, "model": "claude-sonnet-4-5", "role": "assistant",
                    "usage": {"input_tokens": usage.get("i", 0), "output_tokens": usage.get("o", 0),
                              "cache_creation_input_tokens": usage.get("cc", 0),
                              "cache_read_input_tokens": usage.get("cr", 0)}},
    }  # fmt: skip
    if request is None:
        del line["requestId"]
    return json.dumps(line)


def turn(repo: Path, transcript: Path, session: str = SESSION_A, **more: str) -> str:
    return json.dumps({
        "session_id": session, "transcript_path": str(transcript), "cwd": str(repo),
        "hook_event_name": "UserPromptSubmit", "prompt": "go on", **more,
    })  # fmt: skip


def run(event: str, host: str, stdin: str, daemon: DaemonProcess) -> str:
    done = hook(event, host, stdin, daemon.socket_path)
    assert done.returncode == 0, done.stderr
    return done.stdout


def totals(daemon: DaemonProcess, repo: Path, **filters: Any) -> tuple[int, int, int, int]:
    with Client(daemon.socket_path, project=str(repo)) as client:
        t = client.cost(**filters).totals
    return (t.input, t.output, t.cache_creation, t.cache_read)


def test_claude_usage_is_read_in_steps_and_counted_once(
    daemon: DaemonProcess, repo: Path, workdir: Path
) -> None:
    with Client(daemon.socket_path, agent=AGENT_A, project=str(repo)) as a:
        task = a.post("parser").task
        a.claim(task.id)
    transcript = workdir / "session.jsonl"
    user = json.dumps({"type": "user", "message": {"role": "user", "content": "x" * 5000}})
    partial = claude_line("msg_3", "req_3", 0, i=7, o=70, cc=0, cr=700)
    transcript.write_text(
        "\n".join([
            user,
            claude_line("msg_1", "req_1", 0, i=3, o=40, cc=1000, cr=20000),
            claude_line("msg_1", "req_1", 1, i=3, o=40, cc=1000, cr=20000),  # same response
            claude_line("msg_2", "req_2", 0, i=5, o=60, cc=200, cr=21000),
        ]) + "\n" + partial[:40]  # the host is still writing this line
    )  # fmt: skip
    quiet = run("deliver", "claude", turn(repo, transcript), daemon)
    assert totals(daemon, repo, task_id=task.id) == (8, 100, 1200, 41000)
    with transcript.open("a") as handle:
        handle.write(partial[40:] + "\n" + claude_line("msg_4", "req_4", 0, i=1, o=1) + "\n")
    assert run("deliver", "claude", turn(repo, transcript), daemon) == quiet
    expected = (16, 171, 1200, 41700)
    assert totals(daemon, repo, task_id=task.id) == expected
    # Again, and again from the start with the offset forgotten: counted once.
    run("deliver", "claude", turn(repo, transcript), daemon)
    for state in (daemon.socket_path.parent / "state" / "coordd" / "usage").glob("*.json"):
        state.unlink()
    run("deliver", "claude", turn(repo, transcript), daemon)
    assert totals(daemon, repo, task_id=task.id) == expected
    assert totals(daemon, repo) == expected  # nothing unattributed: the tab held the task
    with Client(daemon.socket_path, project=str(repo)) as client:
        rows = client.cost(task_id=task.id).rows
        assert [(r.agent, r.model, r.entries) for r in rows] == [(AGENT_A, "claude-sonnet-4-5", 4)]
        reports = client.events_since(types=["usage.reported"]).events
        assert [e.usage.recorded for e in reports if e.usage] == [2, 2]  # one event a report


def test_codex_token_counts_are_read_from_its_rollout(
    daemon: DaemonProcess, repo: Path, workdir: Path
) -> None:
    with Client(daemon.socket_path, agent=CODEX_AGENT, project=str(repo)) as c:
        task = c.post("lexer").task
        c.claim(task.id)

    def count(total: int, i: int, cached: int, o: int) -> str:
        info = {
            "total_token_usage": {"total_tokens": total},
            "last_token_usage": {
                "input_tokens": i,
                "cached_input_tokens": cached,
                "output_tokens": o,
                "reasoning_output_tokens": 0,
            },
        }
        # After the claim whatever the clock's grain: in the claim's own millisecond, the
        # count would be before it (unattributed), as it was once on a fast machine.
        return json.dumps({"timestamp": later(), "type": "event_msg",
                           "payload": {"type": "token_count", "info": info}})  # fmt: skip

    rollout = workdir / "rollout-2026-12-06T07-00-00-x.jsonl"
    context = json.dumps({"timestamp": now(), "type": "turn_context",
                          "payload": {"model": "gpt-5-codex", "cwd": str(repo)}})  # fmt: skip
    rate_only = json.dumps({"timestamp": now(), "type": "event_msg",
                            "payload": {"type": "token_count", "info": None}})  # fmt: skip
    rollout.write_text(
        "\n".join([context, count(1100, 1000, 800, 100), count(1100, 1000, 800, 100), rate_only])
        + "\n"
    )
    stdin = turn(repo, rollout, CODEX_SESSION, model="gpt-5-codex")
    run("deliver", "codex", stdin, daemon)
    assert totals(daemon, repo, task_id=task.id) == (200, 100, 0, 800)
    with rollout.open("a") as handle:
        handle.write(count(3400, 2000, 1900, 300) + "\n")
    run("deliver", "codex", stdin, daemon)
    run("deliver", "codex", stdin, daemon)
    assert totals(daemon, repo, task_id=task.id) == (300, 400, 0, 2700)
    with Client(daemon.socket_path, project=str(repo)) as client:
        (row,) = client.cost(task_id=task.id).rows
    assert (row.agent, row.model, row.entries) == (CODEX_AGENT, "gpt-5-codex", 2)


def test_claude_lines_without_a_request_id_are_keyed_by_the_response(
    daemon: DaemonProcess, repo: Path, workdir: Path
) -> None:
    """Claude Code 2.1.332 writes no `requestId`: the response's id alone is the key, so
    its blocks count once and a re-read from the start adds nothing."""
    with Client(daemon.socket_path, agent=AGENT_A, project=str(repo)) as a:
        task = a.post("parser").task
        a.claim(task.id)
    transcript = workdir / "session.jsonl"
    transcript.write_text(
        "\n".join([
            claude_line("msg_a", None, 0, later(), i=3, o=40, cc=100, cr=2000),
            claude_line("msg_a", None, 1, later(), i=3, o=40, cc=100, cr=2000),  # same one
            claude_line("msg_b", None, 0, later(), i=5, o=60),
        ]) + "\n"
    )  # fmt: skip
    run("deliver", "claude", turn(repo, transcript), daemon)
    for state in (daemon.socket_path.parent / "state" / "coordd" / "usage").glob("*.json"):
        state.unlink()
    run("deliver", "claude", turn(repo, transcript), daemon)
    assert totals(daemon, repo, task_id=task.id) == (8, 100, 100, 2000)
    with Client(daemon.socket_path, project=str(repo)) as client:
        (row,) = client.cost(task_id=task.id).rows
    assert row.entries == 2


def codex_record(response: str, at: str, i: int, cached: int, o: int) -> str:
    """Codex 0.171.0's line for one response, written as it arrives."""
    usage = {
        "input_tokens": i,
        "cached_input_tokens": cached,
        "cache_write_input_tokens": 0,
        "output_tokens": o,
        "reasoning_output_tokens": 0,
        "total_tokens": i + o,
    }
    return json.dumps({"timestamp": at, "type": "token_usage_record",
                       "payload": {"thread_id": CODEX_SESSION, "response_id": response,
                                   "usage": usage, "turn_token_usage": usage,
                                   "thread_token_usage": usage}})  # fmt: skip


def codex_count(total: int, i: int, cached: int, o: int) -> str:
    """Codex's `token_count` event, written once the response's tools have run."""
    last = {
        "input_tokens": i,
        "cached_input_tokens": cached,
        "output_tokens": o,
        "reasoning_output_tokens": 0,
        "total_tokens": i + o,
    }
    info = {
        "total_token_usage": {"total_tokens": total},
        "last_token_usage": last,
        "last_usage_includes_reasoning": False,
    }
    return json.dumps({"timestamp": now(), "type": "event_msg",
                       "payload": {"type": "token_count", "info": info}})  # fmt: skip


def test_codex_usage_records_are_charged_when_the_response_came(
    daemon: DaemonProcess, repo: Path, workdir: Path
) -> None:
    """Codex 0.171.0 writes `token_usage_record` as a response arrives and its
    `token_count` only after the response's tool ran: the response that claimed a task
    (its record before the claim, its count after) is not the task's, and a rollout's
    usage counts once, from its records, even when the two are read apart."""
    rollout = workdir / "rollout-2026-12-06T07-00-00-y.jsonl"
    context = json.dumps({"timestamp": now(), "type": "turn_context",
                          "payload": {"model": "gpt-5-codex", "cwd": str(repo)}})  # fmt: skip
    rollout.write_text(context + "\n" + codex_record("resp_1", now(), 1000, 800, 100) + "\n")
    stdin = turn(repo, rollout, CODEX_SESSION, model="gpt-5-codex")
    run("deliver", "codex", stdin, daemon)  # the record read; its count not yet written
    with Client(daemon.socket_path, agent=CODEX_AGENT, project=str(repo)) as c:
        task = c.post("lexer").task
        c.claim(task.id)  # the tool response 1 asked for
    with rollout.open("a") as handle:
        handle.write(codex_count(1100, 1000, 800, 100) + "\n")
        handle.write(codex_record("resp_2", later(), 2000, 1500, 50) + "\n")
        handle.write(codex_count(3150, 2000, 1500, 50) + "\n")
    run("deliver", "codex", stdin, daemon)
    assert totals(daemon, repo, task_id=task.id) == (500, 50, 0, 1500)
    assert totals(daemon, repo) == (700, 150, 0, 2300)  # response 1 unattributed, once
    for state in (daemon.socket_path.parent / "state" / "coordd" / "usage").glob("*.json"):
        state.unlink()  # read again from the start: the same two
    run("deliver", "codex", stdin, daemon)
    assert totals(daemon, repo) == (700, 150, 0, 2300)


def test_a_broken_transcript_changes_nothing_a_hook_answers(
    daemon: DaemonProcess, repo: Path, workdir: Path
) -> None:
    plain = json.dumps({"session_id": SESSION_A, "cwd": str(repo),
                        "hook_event_name": "UserPromptSubmit", "prompt": "go"})  # fmt: skip
    expected = run("deliver", "claude", plain, daemon)
    for broken in (workdir / "missing.jsonl", workdir):  # absent; a directory
        assert run("deliver", "claude", turn(repo, broken), daemon) == expected
    garbage = workdir / "garbage.jsonl"
    garbage.write_bytes(b'\x00\xff{"usage": [\n{"type": "assistant", "message": 3, "usage": 1}\n')
    assert run("deliver", "claude", turn(repo, garbage), daemon) == expected
    log = daemon.socket_path.parent / "state" / "coordd" / "usage" / "usage.log"
    assert "usage not reported" in log.read_text()
    assert totals(daemon, repo) == (0, 0, 0, 0)


def test_a_budget_crossed_by_a_turn_reaches_the_tabs_context(
    daemon: DaemonProcess, repo: Path, workdir: Path
) -> None:
    with Client(daemon.socket_path, agent=AGENT_A, project=str(repo)) as a:
        task = a.post("bounded", budget=1000).task
        a.claim(task.id)
    transcript = workdir / "session.jsonl"
    transcript.write_text(claude_line("m1", "r1", 0, i=10, o=840) + "\n")
    said = json.loads(run("deliver", "claude", turn(repo, transcript), daemon))
    context = said["hookSpecificOutput"]["additionalContext"]
    assert f"task #{task.id} has reached 80% of its token budget (850 of its 1,000" in context
    assert run("deliver", "claude", turn(repo, transcript), daemon) == ""  # told once
    with transcript.open("a") as handle:
        handle.write(claude_line("m2", "r2", 0, o=200) + "\n")
    # Crossed at Stop (no channel to the model there): told at the next prompt.
    wake = hook(
        "wake",
        "claude",
        turn(repo, transcript),
        daemon.socket_path,
        CLAUDE_CODE_SESSION_ATTENDED="0",
    )  # a headless run: no wait after the report
    assert wake.returncode == 0, wake.stderr
    later = json.loads(run("deliver", "claude", turn(repo, workdir / "none.jsonl"), daemon))
    assert (
        "has used its whole token budget (1,050 of its 1,000"
        in (later["hookSpecificOutput"]["additionalContext"])
    )


def test_the_ledger_survives_a_daemon_restart_and_still_counts_once(
    daemon: DaemonProcess, repo: Path, workdir: Path
) -> None:
    with Client(daemon.socket_path, agent=AGENT_A, project=str(repo)) as a:
        task = a.post("durable").task
        a.claim(task.id)
    transcript = workdir / "session.jsonl"
    transcript.write_text(claude_line("m1", "r1", 0, i=4, o=40, cr=400) + "\n")
    run("deliver", "claude", turn(repo, transcript), daemon)
    assert daemon.stop() == 0
    daemon.start()
    assert totals(daemon, repo, task_id=task.id) == (4, 40, 0, 400)
    for state in (daemon.socket_path.parent / "state" / "coordd" / "usage").glob("*.json"):
        state.unlink()  # the hook re-reads the whole transcript: still once
    with transcript.open("a") as handle:
        handle.write(claude_line("m2", "r2", 0, i=1, o=10) + "\n")
    run("deliver", "claude", turn(repo, transcript), daemon)
    assert totals(daemon, repo, task_id=task.id) == (5, 50, 0, 400)


def test_a_task_released_at_its_budget_tells_its_tab_it_holds_it_no_more(
    daemon: DaemonProcess, repo: Path, workdir: Path
) -> None:
    posted = subprocess.run(
        [COORD, "--agent", AGENT_A, "post", "bounded", "--budget", "1k", "--budget-release",
         "--json"],
        cwd=repo, env=coord_env(daemon.socket_path), capture_output=True, text=True,
        timeout=60, check=True,
    )  # fmt: skip
    task = json.loads(posted.stdout)["task"]["id"]
    with Client(daemon.socket_path, agent=AGENT_A, project=str(repo)) as a:
        a.claim(task)
    transcript = workdir / "session.jsonl"
    transcript.write_text(claude_line("m1", "r1", 0, i=10, o=1200) + "\n")
    said = json.loads(run("deliver", "claude", turn(repo, transcript), daemon))
    assert "you no longer hold it" in said["hookSpecificOutput"]["additionalContext"]
    with Client(daemon.socket_path, project=str(repo)) as client:
        assert client.get(task).task.state == "pending"


def test_a_spent_budget_is_a_message_in_the_persons_inbox(
    daemon: DaemonProcess, repo: Path, workdir: Path
) -> None:
    """The turn that spends a task's whole budget, reported at Stop (no channel to the
    model there), leaves a message to `human-<user>` on the task; 80% leaves none."""
    with Client(daemon.socket_path, agent=AGENT_A, project=str(repo)) as a:
        task = a.post("bounded work", budget=1000).task
        a.claim(task.id)
    transcript = workdir / "session.jsonl"
    transcript.write_text(claude_line("m1", "r1", 0, o=850) + "\n")
    person = {"LOGNAME": "ada", "USER": "ada", "CLAUDE_CODE_SESSION_ATTENDED": "0"}
    assert (
        hook("wake", "claude", turn(repo, transcript), daemon.socket_path, **person).returncode == 0
    )
    with Client(daemon.socket_path, agent="human-ada", project=str(repo)) as ada:
        assert ada.read_messages().messages == []  # 80%: the boards mark it, no message
    with transcript.open("a") as handle:
        handle.write(claude_line("m2", "r2", 0, o=200) + "\n")
    assert (
        hook("wake", "claude", turn(repo, transcript), daemon.socket_path, **person).returncode == 0
    )
    with Client(daemon.socket_path, agent="human-ada", project=str(repo)) as ada:
        (message,) = ada.read_messages().messages
    assert (message.sender, message.to, message.task_id) == (AGENT_A, "human-ada", task.id)
    assert f"Task #{task.id} (bounded work) has used its whole token budget" in message.body
    assert "1,050 of 1,000 tokens" in message.body


def test_codex_reports_a_turn_at_its_stop_and_the_person_hears_of_a_spent_budget(
    daemon: DaemonProcess, repo: Path, workdir: Path
) -> None:
    """`coord hook turn-end` (Codex's Stop): the turn's usage reaches the ledger as it ends,
    not at the tab's next prompt, and the hook answers nothing (the turn ends as it would)."""
    with Client(daemon.socket_path, agent=CODEX_AGENT, project=str(repo)) as c:
        task = c.post("lexer", budget=1000).task
        c.claim(task.id)
    rollout = workdir / "rollout-2026-12-06T07-00-00-z.jsonl"
    context = json.dumps({"timestamp": now(), "type": "turn_context",
                          "payload": {"model": "gpt-5-codex", "cwd": str(repo)}})  # fmt: skip
    rollout.write_text(context + "\n" + codex_record("resp_1", later(), 1000, 0, 100) + "\n")
    stdin = turn(repo, rollout, CODEX_SESSION, model="gpt-5-codex", hook_event_name="Stop")
    ended = hook("turn-end", "codex", stdin, daemon.socket_path, LOGNAME="ada", USER="ada")
    assert (ended.returncode, ended.stdout) == (0, "")
    assert totals(daemon, repo, task_id=task.id) == (1000, 100, 0, 0)
    with Client(daemon.socket_path, agent="human-ada", project=str(repo)) as ada:
        (message,) = ada.read_messages().messages
    assert message.task_id == task.id and "1,100 of 1,000 tokens" in message.body

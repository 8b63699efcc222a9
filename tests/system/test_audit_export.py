"""`coord export` against a real daemon: the JSONL of a 100,000-event log is exactly
`events.since` from 0, written in bounded memory; Markdown has one section per task
with who did what, a task and a time range narrow it, and agents' text stays text."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from coordd_client.aio import AsyncClient
from coordd_client.client import Client
from coordd_wire.wire import EVENT_TYPES
from support import COORD, DaemonProcess, coord, coord_env

PROJECT = "/home/ada/shop"
#: The log's size: what the issue asks for.
EVENTS = 100_000
#: Peak memory `coord export` may reach, in KiB: `coord status` peaks at 24 MiB and
#: this export at 26 (measured); the whole log (50 MB of JSON) decoded would be hundreds.
MAX_RSS_KIB = 64 * 1024
#: Runs `coord` and, as it exits, writes its peak RSS to stderr. VmHWM belongs to
#: the process's own memory image, new at exec; `ru_maxrss` would also count the
#: forked copy of this test process, which is large after filling the log.
PEAK = (
    "import atexit, runpy, sys\n"
    "def peak():\n"
    "    for line in open('/proc/self/status'):\n"
    "        if line.startswith('VmHWM:'):\n"
    "            sys.stderr.write('peak ' + line.split()[1] + '\\n')\n"
    "atexit.register(peak)\n"
    "sys.argv = ['coord', *sys.argv[1:]]\n"
    f"runpy.run_path({COORD!r}, run_name='__main__')\n"
)


async def _fill(socket: Path, events: int) -> None:
    """`events` events: posts, then claims and completions of some of them."""
    tasks = events // 2
    async with AsyncClient.connect(socket) as client:
        limiter = trio.Semaphore(200)

        async def one(i: int) -> None:
            async with limiter:
                task = (await client.post(f"task {i}", project=PROJECT, agent="filler")).task
                if i < (events - tasks) // 2:
                    claim = await client.claim(task.id, "worker")
                    await client.complete(task.id, "worker", fence=claim.task.fence, result="ok")

        async with trio.open_nursery() as nursery:
            for i in range(tasks):
                nursery.start_soon(one, i)


def _since(daemon: DaemonProcess) -> Iterator[object]:
    """`events.since` from 0 with every type named, page by page, as plain JSON."""
    after = 0
    with daemon.client(timeout_s=120) as client:
        while True:
            params = {"after_seq": after, "limit": 10_000, "types": list(EVENT_TYPES)}
            answer = client.call_raw("events.since", params)
            page = json.loads(bytes(answer.result))
            yield from page["events"]
            if len(page["events"]) < 10_000:
                return
            after = page["last_seq"]


@pytest.mark.timeout(900)  # filling 100,000 events on a loaded 2-core machine: a hang only
def test_jsonl_of_a_100000_event_log_equals_events_since_in_bounded_memory(
    daemon: DaemonProcess, workdir: Path
) -> None:
    trio.run(_fill, daemon.socket_path, EVENTS)
    out = workdir / "log.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            PEAK,
            "export",
            "--format",
            "jsonl",
            "--all-projects",
            "-o",
            str(out),
        ],
        env=coord_env(daemon.socket_path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    peak_kib = int(done.stderr.rsplit("peak ", 1)[1])
    with out.open() as lines:
        exported = (json.loads(line) for line in lines)
        count = 0
        for ours, theirs in zip(exported, _since(daemon), strict=True):
            assert ours == theirs
            count += 1
    assert count == EVENTS
    assert peak_kib < MAX_RSS_KIB, (peak_kib, out.stat().st_size)


def test_markdown_has_a_section_per_task_and_keeps_agents_text_as_text(
    daemon: DaemonProcess,
) -> None:
    with daemon.client() as client:
        first = client.post("# not a heading *or bold*", project=PROJECT, agent="claude-1",
                            body="```\nclose the fence\n```").task  # fmt: skip
        claim = client.claim(first.id, "codex-2")
        client.complete(first.id, "codex-2", fence=claim.task.fence, result="fixed in abc123")
        second = client.post("second", project=PROJECT, agent="claude-1").task
        client.post("elsewhere", project="/other", agent="claude-1")
    done = coord("--project", PROJECT, "export", socket=daemon.socket_path)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.count("\n## #") == 2  # one section per task of this project
    assert "## #1 # not a heading \\*or bold\\*" in text  # '#' mid-line is text already
    assert "**posted** by `claude-1`" in text and "**claimed** by `codex-2`" in text
    assert "**completed** by `codex-2`" in text and "fixed in abc123" in text
    assert f"project `{PROJECT}`" in text and "\\-" not in text  # names read raw
    assert "````text\n```\nclose the fence\n```\n````" in text  # a longer fence
    assert "elsewhere" not in text
    one = coord("--project", PROJECT, "export", "--task", str(second.id), socket=daemon.socket_path)
    assert one.stdout.count("\n## #") == 1 and "second" in one.stdout
    future = coord(
        "--project", PROJECT, "export", "--since", "2999-01-01", socket=daemon.socket_path
    )
    assert future.returncode == 0 and "\n## #" not in future.stdout
    bad = coord("export", "--since", "yesterday-ish", socket=daemon.socket_path)
    assert bad.returncode == 1 and "not an ISO time" in bad.stderr


def test_the_trail_keeps_what_is_not_a_task_event_messages_and_slots(
    daemon: DaemonProcess,
) -> None:
    """1.2's events with no task reach only callers that name their types: the export
    names them all, so a thread's messages and a slot's lease are in the trail."""
    with daemon.client() as client:
        task = client.post("migrate the schema", project=PROJECT, agent="claude-1").task
        client.send_message("which table first?", task_id=task.id, agent="codex-2",
                            project=PROJECT, kind="question")  # fmt: skip
        client.acquire_slot("migrations", agent="codex-2", project=PROJECT)
    lines = coord("--project", PROJECT, "export", "--format", "jsonl", socket=daemon.socket_path)
    assert lines.returncode == 0, lines.stderr
    types = [json.loads(line)["type"] for line in lines.stdout.splitlines()]
    assert types == ["task.posted", "message.sent", "slot.granted"]
    markdown = coord("--project", PROJECT, "export", socket=daemon.socket_path)
    assert "**question** #" in markdown.stdout and "which table first?" in markdown.stdout


def test_the_markdown_covers_every_event_kind_readably(daemon: DaemonProcess) -> None:
    """Landings, slot and port grants, a release request and its approval, a message to
    an agent and a file edit all reach the Markdown, under "Board events", names as code
    spans (issue 47 item 9: they were in the JSONL only, and every `-` escaped)."""
    with (
        Client(daemon.socket_path, agent="root-session-7632-6c09", project=PROJECT) as human,
        Client(daemon.socket_path, agent="claude-1", project=PROJECT) as claude,
    ):
        human.reserve(["src/expiry2.py"])
        asked = claude.request_release(patterns=["src/expiry2.py"], body="need it for #3")
        human.answer_request(asked.request.id, "approve", reason="take it")
        human.send_message("land when green", to="claude-1")
        claude.acquire_slot("migrations")
        claude.lease_port("dev-server")
        queued = claude.enqueue_landing("feature-x", "main", ["src/expiry2.py"]).landing
        claude.start_landing(queued.id)
        claude.finish_landing(queued.id, "landed", commit="0123456789abcdef" * 2 + "01234567")
        claude.record_edit(["src/expiry2.py"], ["h1"], worktree="/home/ada/shop-wt")
    done = coord("--project", PROJECT, "export", socket=daemon.socket_path)
    assert done.returncode == 0, done.stderr
    board = done.stdout.split("## Board events", 1)[1]
    assert "**release request** #1 from `claude-1` to `root-session-7632-6c09`" in board
    assert "asking `root-session-7632-6c09` for `src/expiry2.py` (open)" in board
    assert "**answer** #2 from `root-session-7632-6c09` to `claude-1`" in board
    assert "replying to #1: approved: src/expiry2.py is yours now (take it)" in board
    assert "**message** #3 from `root-session-7632-6c09` to `claude-1`" in board
    assert "**slot.granted** `migrations` to `claude-1`" in board
    assert "**slot.granted** port " in board and "`dev-server` to `claude-1`" in board
    assert "**land.queued** #1 `feature-x` onto `main` by `claude-1`" in board
    assert "**land.started** #1" in board and "**land.landed** #1" in board
    assert "at `0123456789ab`" in board
    assert "**file.edited** `src/expiry2.py` in `/home/ada/shop-wt` by `claude-1`" in board
    assert "\\-" not in done.stdout  # nothing escaped that Markdown would not act on
    lines = [line for line in board.splitlines() if line.startswith("- ")]
    seqs = [int(line.rsplit("(seq ", 1)[1].split(")")[0]) for line in lines]
    assert seqs == sorted(seqs) and len(lines) >= 10


def test_a_long_message_is_kept_whole_in_the_markdown(daemon: DaemonProcess) -> None:
    """Found in review (issue 47 item 9): the Markdown kept a message's first line, cut at
    200 characters with no mark, so an audit trail lost the rest of what was said. A
    longer body is marked cut on its line and kept whole in a fence under it."""
    body = "use `foo_bar` *now*\n## not a heading\n" + "x" * 300
    with daemon.client() as client:
        client.send_message(body, to="human-ada", agent="codex-2", project=PROJECT)
        client.send_message("short one", to="human-ada", agent="codex-2", project=PROJECT)
    done = coord("--project", PROJECT, "export", socket=daemon.socket_path)
    assert done.returncode == 0, done.stderr
    board = done.stdout.split("## Board events", 1)[1]
    assert "(seq 1): use \\`foo_bar\\` \\*now\\*…\n" in board
    fenced = "\n".join("  " + line for line in ["```text", *body.splitlines(), "```"])
    assert fenced in board
    assert board.rstrip().endswith("(seq 2): short one")

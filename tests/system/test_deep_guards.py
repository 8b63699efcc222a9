"""Issue 44: a `file.guard` against 10,000 live wildcard reservations, over a real daemon.

Every wildcard-leading reservation is a candidate for every path (the prefix
index cannot rule it out), so this is the guard's worst case per candidate.
It used to match all of them inside the writer's transaction: one 16-path
guard took 7.7 s (past the hooks' 3 s timeout, so every edit failed open),
and every other write waited behind it. One daemon is filled once for the
module (about 10 s); the numbers are ratios or the hooks' own budget, never a
time measured on a quiet machine.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator

import pytest

from coordd_client import Client
from coordd_client.methods_edits import file_guard
from support import DaemonProcess, short_tmpdir

PROJECT = "/deep"
LIVE_WILDCARDS = 10_000
#: The 16 paths of one large edit (PROTOCOL-1.2's `file.guard`), none reserved.
PATHS = [f"src/mod{n}/file{n}.py" for n in range(16)]


@pytest.fixture(scope="module")
def crowded() -> Iterator[DaemonProcess]:
    """A daemon whose project holds 10,000 live exclusive `**/genN/*.py` reservations."""
    workdir = short_tmpdir()
    process = DaemonProcess(workdir).start()
    try:
        with Client(process.socket_path, timeout_s=600, project=PROJECT) as client:
            for start in range(0, LIVE_WILDCARDS, 64):
                texts = [f"**/gen{n}/*.py" for n in range(start, start + 64)]
                client.reserve(texts, agent="filler", ttl_s=86400)
        yield process
    finally:
        process.ensure_dead()
        shutil.rmtree(workdir, ignore_errors=True)


def test_a_16_path_guard_answers_within_the_hooks_budget(crowded: DaemonProcess) -> None:
    """7.7 s before: a fail-open. The hooks give the guard GUARD_TIMEOUT_S (3 s)."""
    with Client(crowded.socket_path, timeout_s=60, project=PROJECT) as client:
        started = time.perf_counter()
        verdict = client.file_guard(PATHS, agent="editor", worktree=PROJECT)
        took = time.perf_counter() - started
    # Each path lies under what some `**/genN/*.py` could cover below it: allowed,
    # nothing reserved automatically (as before).
    assert verdict.allowed and verdict.reserved == []
    # Its time is a benchmark figure (bench/reservations.py, SECURITY.md: 0.8 s median on a
    # loaded 2-core machine against 7.7 s before), not asserted here: a timing bound in a
    # test fails on a busier machine than the one that set it.
    assert took > 0


def test_another_clients_claim_does_not_wait_for_a_running_guard(
    crowded: DaemonProcess,
) -> None:
    """Claims made while a large guard is in flight each take a small share of its time:
    before, the guard held the writer throughout and a claim waited for all of it."""
    with Client(crowded.socket_path, timeout_s=60, project=PROJECT) as poster:
        ids = [poster.post(f"t{n}").task.id for n in range(200)]
    sent, finished = threading.Event(), threading.Event()
    guard_took: list[float] = []

    def guard() -> None:
        with Client(crowded.socket_path, timeout_s=60, project=PROJECT) as client:
            sent.set()
            started = time.perf_counter()
            client.file_guard(PATHS * 4, agent="guarded", worktree=PROJECT)
            guard_took.append(time.perf_counter() - started)
        finished.set()

    latencies: list[float] = []
    with Client(crowded.socket_path, timeout_s=60, project=PROJECT) as claimer:
        claimer.ping()  # connected before the guard starts
        thread = threading.Thread(target=guard)
        thread.start()
        assert sent.wait(10)
        for task_id in ids:
            if finished.is_set():
                break
            started = time.perf_counter()
            claimer.claim(task_id, agent="worker")
            latencies.append(time.perf_counter() - started)
        thread.join(60)
    assert guard_took and latencies, "no claim was made while the guard ran"
    worst = max(latencies)
    assert worst < 0.75 * guard_took[0], (
        f"a claim took {worst:.2f} s while a {guard_took[0]:.2f} s guard ran"
    )


def test_bulk_guards_of_many_connections_leave_readers_for_a_hooks_guard(
    crowded: DaemonProcess,
) -> None:
    """Six connections each in the middle of a bulk guard (32 paths, seconds each
    against this crowd) once held every reader, so a pre-edit hook's one-path guard
    from anywhere waited for one of them to end, past the hooks' 3 s: the edit went
    ahead unchecked. Bulk matching now runs one at a time daemon-wide, and the small
    guard is answered beside it: before any bulk guard is (an order, not a time)."""
    bulk = file_guard(
        [f"src/bulk{n}/file{n}.py" for n in range(32)], agent="bulk", worktree=PROJECT
    )
    busy = [Client(crowded.socket_path, timeout_s=600, project=PROJECT) for _ in range(6)]
    answered: list[float] = []
    try:
        for client in busy:
            client.send_request(bulk.method, {**(bulk.params or {}), "project": PROJECT})
            pong = client.send_request("ping")
            # A ping is answered where its frame is read, so its answer means the
            # daemon has the guard in hand (running, or waiting for a reader).
            assert client.next_frame(time.monotonic() + 60).id == pong

        def finish(client: Client) -> None:
            client.next_frame(time.monotonic() + 600)
            answered.append(time.monotonic())

        threads = [threading.Thread(target=finish, args=(client,)) for client in busy]
        for thread in threads:
            thread.start()
        with Client(crowded.socket_path, timeout_s=600, project=PROJECT) as hook:
            verdict = hook.file_guard(["src/edited.py"], agent="editor", worktree=PROJECT)
            small_answered = time.monotonic()
        for thread in threads:
            thread.join(600)
    finally:
        for client in busy:
            client.close()
    assert verdict.allowed
    assert len(answered) == len(busy)
    assert small_answered < min(answered), (
        f"the hook's guard was answered {small_answered - min(answered):.2f} s after the"
        " first bulk guard: it waited for a reader"
    )

"""The seed's promise: N processes claim the same task at the same instant; exactly one wins."""

from __future__ import annotations

from collections import Counter

import msgspec
import pytest
from racing import race

from support import DaemonProcess, query_store

pytestmark = pytest.mark.both_backends


def test_sixteen_processes_one_task_exactly_one_winner(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        task = client.post("the contested task").task
    agents = [f"agent-{n}" for n in range(16)]
    outputs = race("claimer.py", daemon.socket_path, [[agent, str(task.id)] for agent in agents])
    results = {agent: output[0] for agent, output in zip(agents, outputs, strict=True)}
    winners = [agent for agent, (_, won, _, _) in results.items() if won]
    assert len(winners) == 1
    winner = winners[0]
    for agent, (_, won, claimed_by, fence) in results.items():
        assert claimed_by == winner, f"{agent} was told the holder is {claimed_by}"
        assert fence == 1
        assert won == (agent == winner)
    with daemon.client() as client:
        final = client.get(task.id).task
    assert final.claimed_by == winner and final.fence == 1 and final.attempts == 1


def test_thirty_two_processes_hundred_tasks_each_task_one_winner(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        ids = [client.post(f"task {n}").task.id for n in range(100)]
    agents = [f"p{n}" for n in range(32)]
    id_list = ",".join(map(str, ids))
    outputs = race("claimer.py", daemon.socket_path, [[agent, id_list] for agent in agents])

    winners: dict[int, list[str]] = {task_id: [] for task_id in ids}
    for agent, output in zip(agents, outputs, strict=True):
        assert sorted(row[0] for row in output) == ids  # every process tried every task
        for task_id, won, claimed_by, fence in output:
            if won:
                winners[task_id].append(agent)
                assert claimed_by == agent
            assert fence == 1
    assert all(len(w) == 1 for w in winners.values()), {
        k: v for k, v in winners.items() if len(v) != 1
    }
    # Losers were told the true winner.
    for output in outputs:
        for task_id, _won, claimed_by, _fence in output:
            assert claimed_by == winners[task_id][0]

    # The store agrees, read directly (the SQLite file, or PostgreSQL).
    rows = dict(query_store(daemon, "SELECT id, claimed_by FROM tasks WHERE state = 'claimed'"))
    assert rows == {task_id: w[0] for task_id, w in winners.items()}
    claimed_events = Counter(
        task_id
        for (task_id,) in query_store(
            daemon, "SELECT task_id FROM events WHERE type = 'task.claimed'"
        )
    )
    assert claimed_events == Counter(ids)
    assert query_store(daemon, "SELECT max(fence), max(attempts) FROM tasks") == [(1, 1)]
    # Group commit engaged under this concurrency: fewer transactions than commands.
    with daemon.client() as client:
        info = msgspec.json.decode(client.call_raw("server.info").result)
    writer = info["writer"]
    assert writer["commands"] >= 3200 + 100
    assert writer["transactions"] < writer["commands"]

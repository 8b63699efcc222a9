"""A separate OS process that claims and completes work with its fence, released by a barrier.

    python team_worker.py SOCKET AGENT ids TASK_ID[,TASK_ID...]
    python team_worker.py SOCKET AGENT next

`ids`: claims every listed task in a random order (seeded by AGENT), completing
each one it wins with the fence it got. `next`: drains with task.claim_next,
completing each. Prints one JSON line: [[task_id, won, fence], ...].
"""

from __future__ import annotations

import json
import random
import sys

from coordd_client import Client


def main() -> None:
    socket_path, agent, mode = sys.argv[1:4]
    results = []
    with Client(socket_path) as client:
        client.ping()
        print("ready", flush=True)
        sys.stdin.readline()
        if mode == "ids":
            ids = [int(x) for x in sys.argv[4].split(",")]
            random.Random(agent).shuffle(ids)
            for task_id in ids:
                outcome = client.claim(task_id, agent, lease_s=600)
                if outcome.won:
                    client.complete(task_id, agent, fence=outcome.task.fence)
                results.append([task_id, outcome.won, outcome.task.fence])
        else:
            while (task := client.claim_next(agent, kind="task", lease_s=600).task) is not None:
                client.complete(task.id, agent, fence=task.fence)
                results.append([task.id, True, task.fence])
    print(json.dumps(results), flush=True)


if __name__ == "__main__":
    main()

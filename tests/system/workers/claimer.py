"""A separate OS process that claims tasks over the socket, released by a barrier on stdin.

    python claimer.py SOCKET AGENT TASK_ID[,TASK_ID...]

Connects first, prints "ready", blocks until a line arrives on stdin, then
claims every listed task in a random order (seeded by AGENT) and prints one
JSON line: [[task_id, won, claimed_by, fence], ...].
"""

from __future__ import annotations

import json
import random
import sys

from coordd_client import Client


def main() -> None:
    socket_path, agent, ids_text = sys.argv[1:4]
    ids = [int(x) for x in ids_text.split(",")]
    random.Random(agent).shuffle(ids)
    with Client(socket_path) as client:
        client.ping()
        print("ready", flush=True)
        sys.stdin.readline()
        results = []
        for task_id in ids:
            outcome = client.claim(task_id, agent)
            results.append([task_id, outcome.won, outcome.task.claimed_by, outcome.task.fence])
    print(json.dumps(results), flush=True)


if __name__ == "__main__":
    main()

"""A separate OS process draining the queue with task.claim_next, released by a stdin barrier.

    python next_claimer.py SOCKET AGENT

Prints one JSON line: [[task_id, priority], ...] in the order it got them.
"""

from __future__ import annotations

import json
import sys

from coordd_client import Client


def main() -> None:
    socket_path, agent = sys.argv[1:3]
    got = []
    with Client(socket_path) as client:
        client.ping()
        print("ready", flush=True)
        sys.stdin.readline()
        while (task := client.claim_next(agent, lease_s=600).task) is not None:
            got.append([task.id, task.priority])
    print(json.dumps(got), flush=True)


if __name__ == "__main__":
    main()

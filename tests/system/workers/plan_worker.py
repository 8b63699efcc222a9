"""A separate OS process working through a plan with claim_next, released by a stdin barrier.

    python plan_worker.py SOCKET AGENT PROJECT TOTAL

Claims ready work, completes it, and when nothing is ready waits (task.wait
with `ready`, no polling) until all TOTAL tasks of PROJECT are done. Prints
one JSON line: the ids it completed, in order.
"""

from __future__ import annotations

import json
import sys

from coordd_client import Client


def main() -> None:
    socket_path, agent, project, total = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    done: list[int] = []
    with Client(socket_path, agent=agent, project=project) as client:
        client.ping()
        print("ready", flush=True)
        sys.stdin.readline()
        while True:
            task = client.claim_next().task
            if task is not None:
                assert not task.blocked_by, task  # never handed out before its dependencies
                client.complete(task.id, fence=task.fence)
                done.append(task.id)
                continue
            finished = client.list_tasks(state="done", limit=1000).tasks
            if len(finished) >= total:
                break
            client.wait(timeout_s=2, ready=True)
    print(json.dumps(done), flush=True)


if __name__ == "__main__":
    main()

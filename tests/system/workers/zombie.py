"""A holder that may be paused (SIGSTOP) past its lease.

    python zombie.py SOCKET TASK_ID LEASE_S

Claims the task, prints its fence, waits for a line on stdin, then tries to
complete with that fence and prints "ok" or the error kind.
"""

from __future__ import annotations

import sys

from coordd_client import Client, CoordError


def main() -> None:
    socket_path, task_id, lease_s = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    with Client(socket_path) as client:
        claim = client.claim(task_id, "zombie", lease_s=lease_s)
        print(claim.task.fence, flush=True)
        sys.stdin.readline()
        try:
            client.complete(task_id, "zombie", fence=claim.task.fence, result="zombie's stale work")
        except CoordError as exc:
            print(exc.data["kind"], flush=True)
        else:
            print("ok", flush=True)


if __name__ == "__main__":
    main()

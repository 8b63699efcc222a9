"""A separate OS process that posts COUNT tasks, released by a stdin barrier.

    python poster.py SOCKET AGENT COUNT [KIND]

Prints one JSON line: the ids it posted, in order.
"""

from __future__ import annotations

import json
import sys

from coordd_client import Client


def main() -> None:
    socket_path, agent, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    kind = sys.argv[4] if len(sys.argv) > 4 else "task"
    with Client(socket_path) as client:
        client.ping()
        print("ready", flush=True)
        sys.stdin.readline()
        ids = [client.post(f"{agent} #{n}", agent=agent, kind=kind).task.id for n in range(count)]
    print(json.dumps(ids), flush=True)


if __name__ == "__main__":
    main()

"""One benchmark client process.

    python -m bench.worker SOCKET MODE AGENT COUNT [FIRST_ID]

Connects, prints "ready", waits for a line on stdin (the barrier), runs COUNT
sequential round trips of MODE and prints JSON: {"latencies_us": [...], "won": n}.
MODE: ping | get (task.get of ids FIRST_ID..) | claim (ids FIRST_ID.. in order) |
claim-won (the same, decoding only `won`: for `bench/floor_lean.py`, which answers only
that) | contended (ids FIRST_ID.., all workers the same ids) | next (task.claim_next from
one shared queue) | post | list | wake (edge-triggered task.wait loop).
"""

from __future__ import annotations

import json
import sys
import time

import msgspec

from coordd_client import Client, methods


class Won(msgspec.Struct):
    """A claim's answer read for `won` alone (the rest of it, if any, is skipped)."""

    won: bool


def main() -> None:
    socket_path, mode, agent, count_text = sys.argv[1:5]
    count = int(count_text)
    first_id = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    latencies: list[float] = []
    won = 0
    with Client(socket_path) as client:
        client.ping()
        seq = client.server_info().last_seq
        print("ready", flush=True)
        sys.stdin.readline()
        clock = time.perf_counter
        for index in range(count):
            start = clock()
            if mode == "ping":
                client.ping()
            elif mode in ("claim", "contended"):
                won += client.claim(first_id + index, agent).won
            elif mode == "claim-won":
                won += client.send(methods.claim(first_id + index, agent).as_type(Won)).won
            elif mode == "next":
                won += client.claim_next(agent).task is not None
            elif mode == "post":
                client.post(f"bench {agent} {index}", agent=agent)
            elif mode == "get":
                client.get(first_id + index)
            elif mode == "list":
                client.list_tasks(limit=100)
            elif mode == "wake":
                result = client.wait(timeout_s=30, kind="wake", after_seq=seq)
                seq = result.seq
                assert result.task is not None
                sent_at = float(result.task.title)
                latencies.append((time.time() - sent_at) * 1e6)
                continue
            latencies.append((clock() - start) * 1e6)
    print(json.dumps({"latencies_us": latencies, "won": won}), flush=True)


if __name__ == "__main__":
    main()

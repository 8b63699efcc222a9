"""A client process for crash tests that writes a Jepsen-style history.

    python crash_worker.py SOCKET AGENT SECONDS HISTORY_FILE [reader]

Loops posting (with idempotency keys), claiming, completing, reserving and
releasing reservations until SECONDS
pass, surviving daemon crashes by reconnecting. Every operation ends up in
HISTORY_FILE as one JSON line with its outcome: "ok" (acknowledged), "fail"
(a definite error code) or "unknown" (the connection died first). Unknown
posts and completions are retried with the same key / same holder, which the
protocol makes exactly-once. A reader only lists tasks and records any
-32603 it sees.
"""

from __future__ import annotations

import json
import random
import sys
import time

from coordd_client import Client, CoordError, DaemonUnavailable


def main() -> None:
    socket_path, agent, seconds, history_path = (
        sys.argv[1],
        sys.argv[2],
        float(sys.argv[3]),
        sys.argv[4],
    )
    reader = len(sys.argv) > 5 and sys.argv[5] == "reader"
    rng = random.Random(agent)
    deadline = time.monotonic() + seconds
    history = open(history_path, "w")  # noqa: SIM115
    client: Client | None = None
    posted: list[int] = []
    held: dict[int, int] = {}
    pending_keys: list[str] = []
    counter = 0
    requests = 0
    reserved: list[list[str]] = []  # granted reservation requests, oldest first
    patterns: list[str] = []

    def record(**entry: object) -> None:
        history.write(json.dumps(entry) + "\n")
        history.flush()

    while time.monotonic() < deadline:
        if client is None:
            try:
                client = Client(socket_path, timeout_s=5).connect()
            except DaemonUnavailable:
                time.sleep(0.02)
                continue
        try:
            if reader:
                op = "list"
                client.list_tasks(limit=50)
                record(op=op, outcome="ok")
                continue
            choice = rng.random()
            if not pending_keys and choice < 0.12:
                op = "reserve"
                # Two patterns only this request names (all or nothing must hold
                # for them) and one that every worker contends for.
                patterns = [f"{agent}/r{requests}/a/**", f"{agent}/r{requests}/b.py"]
                patterns.append(f"hot/{rng.randint(0, 3)}.py")
                requests += 1
                granted = client.reserve(patterns, agent=agent, project="/crash").reservations
                reserved.append(patterns)
                record(op=op, outcome="ok", patterns=patterns, ids=[r.id for r in granted])
            elif not pending_keys and choice < 0.16 and reserved:
                op = "unreserve"
                patterns = reserved.pop(0)
                client.unreserve(patterns, agent=agent, project="/crash")
                record(op=op, outcome="ok", patterns=patterns)
            elif pending_keys or choice < 0.5:
                op = "post"
                key = pending_keys[0] if pending_keys else f"{agent}-{counter}"
                if not pending_keys:
                    counter += 1
                    pending_keys.append(key)
                result = client.post(f"{agent} task", agent=agent, idempotency_key=key)
                pending_keys.remove(key)
                posted.append(result.task.id)
                record(op=op, key=key, outcome="ok", id=result.task.id, created=result.created)
            elif choice < 0.8 or not held:
                op = "claim"
                task_id = (
                    rng.choice(posted)
                    if posted and rng.random() < 0.7
                    else rng.randint(1, max(1, counter * 3))
                )
                claim = client.claim(task_id, agent)
                if claim.won:
                    held[task_id] = claim.task.fence
                record(
                    op=op,
                    id=task_id,
                    outcome="ok",
                    won=claim.won,
                    fence=claim.task.fence,
                    holder=claim.task.claimed_by,
                )
            else:
                op = "complete"
                task_id, fence = next(iter(held.items()))
                done = client.complete(task_id, agent, fence=fence, result=f"by {agent}")
                del held[task_id]
                record(op=op, id=task_id, fence=fence, outcome="ok", state=done.task.state)
        except DaemonUnavailable:
            record(op=op, outcome="unknown", patterns=patterns)
            client.close()
            client = None
        except CoordError as exc:
            if op == "complete":
                held.pop(task_id, None)
            # A disk error's write is not acknowledged, but its WAL frames may have
            # been written before the sync failed: its outcome is unknown, as a lost
            # reply's is (docs/ARCHITECTURE.md, "After a disk error").
            outcome = "unknown" if exc.data.get("reason") == "disk_error" else "fail"
            record(
                op=op, outcome=outcome, code=exc.code, kind=exc.data.get("kind"), patterns=patterns
            )
    if client is not None:
        client.close()
    history.close()


if __name__ == "__main__":
    main()

"""One benchmark client process against a peer server (Redis or PostgreSQL).

    python -m bench.peer_worker PEER ADDRESS MODE AGENT COUNT [FIRST_ID]

The same protocol as `bench.worker`: connect, print "ready", wait for a line
on stdin, run COUNT sequential round trips, print JSON latencies. MODE: ping
(the peer's cheapest round trip) | claim (the conditional claim on ids
FIRST_ID.., each in its own durable transaction).

The claim is the peer's idiom for coordd's primitive: a Lua script that
flips a pending hash to claimed in Redis, the same conditional UPDATE as the
SQLite baseline in PostgreSQL.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

CLAIMED_AT = "2026-11-30T00:00:00.000000Z"
LEASE_UNTIL = "2026-11-30T00:10:00.000000Z"

REDIS_CLAIM = """
if redis.call('HGET', KEYS[1], 'state') ~= 'pending' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'claimed', 'claimed_by', ARGV[1],
           'claimed_at', ARGV[2], 'lease_expires_at', ARGV[3])
return redis.call('HINCRBY', KEYS[1], 'fence', 1)
"""

PG_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS tasks (id BIGINT PRIMARY KEY, state TEXT NOT NULL,"
    " claimed_by TEXT, claimed_at TEXT, lease_expires_at TEXT, fence BIGINT NOT NULL DEFAULT 0)"
)
PG_CLAIM = (
    "UPDATE tasks SET state = 'claimed', claimed_by = %s, claimed_at = %s,"
    " lease_expires_at = %s, fence = fence + 1 WHERE id = %s AND state = 'pending'"
)


def prepare(peer: str, address: str, count: int) -> None:
    """Create `count` pending tasks with ids 1..count (run once, before the workers)."""
    if peer == "redis":
        import redis

        client = redis.Redis(unix_socket_path=address)
        client.flushall()
        pipe = client.pipeline(transaction=False)
        for task_id in range(1, count + 1):
            pipe.hset(f"task:{task_id}", mapping={"state": "pending", "fence": 0})
        pipe.execute()
        client.close()
        return
    import psycopg

    with psycopg.connect(address, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS tasks")
        conn.execute(PG_SCHEMA)
        conn.execute(
            "INSERT INTO tasks (id, state) SELECT g, 'pending' FROM generate_series(1, %s) g",
            (count,),
        )


def _redis_ops(address: str, agent: str) -> tuple[Callable[[], Any], Callable[[int], bool], Any]:
    import redis

    client = redis.Redis(unix_socket_path=address)
    claim = client.register_script(REDIS_CLAIM)

    def claim_one(task_id: int) -> bool:
        return int(claim(keys=[f"task:{task_id}"], args=[agent, CLAIMED_AT, LEASE_UNTIL])) > 0

    return client.ping, claim_one, client


def _pg_ops(address: str, agent: str) -> tuple[Callable[[], Any], Callable[[int], bool], Any]:
    import psycopg

    conn = psycopg.connect(address, autocommit=True, prepare_threshold=0)

    def ping() -> None:
        conn.execute("SELECT 1").fetchone()

    def claim_one(task_id: int) -> bool:
        return conn.execute(PG_CLAIM, (agent, CLAIMED_AT, LEASE_UNTIL, task_id)).rowcount == 1

    return ping, claim_one, conn


def main() -> None:
    peer, address, mode, agent, count_text = sys.argv[1:6]
    count = int(count_text)
    first_id = int(sys.argv[6]) if len(sys.argv) > 6 else 1
    ping, claim_one, handle = (_redis_ops if peer == "redis" else _pg_ops)(address, agent)
    ping()
    print("ready", flush=True)
    sys.stdin.readline()
    latencies: list[float] = []
    won = 0
    clock = time.perf_counter
    for index in range(count):
        start = clock()
        if mode == "ping":
            ping()
        else:
            won += claim_one(first_id + index)
        latencies.append((clock() - start) * 1e6)
    handle.close()
    print(json.dumps({"latencies_us": latencies, "won": won}), flush=True)


if __name__ == "__main__":
    main()

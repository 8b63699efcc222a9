"""One agent process against coordd or a peer an agent would pick instead (issue 46).

    python -m bench.agent_peer_worker PEER ADDRESS AGENT

Connects (and registers, where the peer wants agents to), prints "ready", then
answers one JSON line on stdin with one JSON line on stdout, until stdin ends:

- `{"op": "race", "id": N}`: claim task N once -> `{"won": bool, "clean": bool, "us": float}`
- `{"op": "own", "ids": [...]}`: claim each in turn -> `{"won": n, "latencies_us": [...]}`
- `{"op": "drain", "ids": [...]}`: claim from the shared pool until nothing is left
  -> `{"ids": [won ids], "attempts": n, "latencies_us": [... per attempt]}`

The parent writes each line to every worker at once (the barrier) and times
the round from the write to the last answer (bench/agent_peers.py).

Each adapter drives the peer through its own public interface, the way its
agents do (read from each package's source, pinned in bench/peer_venvs.py):

- `coordd`: the Python client on the Unix socket: `task.claim`, `task.claim_next`.
- `coord-server` (0.13.1): JSON over HTTP, `POST /call {"op", "args"}`; a session
  from `whoami`, a claim is `task_accept` (409 `taken` when another session has
  it); a drain lists `tasks(status="open")` and accepts one of them at random.
- `coord-mcp-server` (0.49.0): its HTTP API, `POST /claims` with one `file` claim
  on `tasks/N` (200 with a claim id: won; 409 with the conflict: lost); a drain
  lists `GET /claims` and claims a path nobody holds, at random.
- `mcp-agent-mail` (0.1.0): MCP over streamable HTTP with the MCP SDK's client,
  `register_agent`, then `file_reservation_paths` with `exclusive: true` on
  `tasks/N`. Its reservations are advisory: a request is granted even when
  another agent holds the path, the holders listed as `conflicts`. `won` is a
  grant (the agent is told the path is reserved for it), `clean` a grant with
  no conflict listed.
- `postgresql`: the floor row, the same conditional UPDATE as the SQLite baseline;
  a drain takes the lowest pending id with `FOR UPDATE SKIP LOCKED`.
"""

from __future__ import annotations

import http.client
import json
import random
import sys
import time
import urllib.parse
from typing import Any, Protocol

#: The peers' project / repository key (every worker of a run shares it).
PROJECT = "bench"
#: An MCP call not answered within this is given up on (counted as not won, an error).
CALL_BUDGET_S = 75.0


class Adapter(Protocol):
    async def claim(self, task: int) -> tuple[bool, bool]:
        """Try to claim `task`: (told it is ours, told so with nobody else holding it)."""
        ...

    async def next(self, pool: list[int]) -> tuple[int | None, bool]:
        """Claim something from `pool`: (the id tried or None when none is left, won)."""
        ...

    async def close(self) -> None: ...


class Coordd:
    def __init__(self, socket: str, agent: str) -> None:
        from coordd_client import Client

        self.agent = agent
        self.client = Client(socket).connect()
        self.client.ping()

    async def claim(self, task: int) -> tuple[bool, bool]:
        won = self.client.claim(task, self.agent).won
        return won, won

    async def next(self, pool: list[int]) -> tuple[int | None, bool]:
        task = self.client.claim_next(self.agent).task
        return (None, False) if task is None else (task.id, True)

    async def close(self) -> None:
        self.client.close()


class Http:
    """One keep-alive connection, reopened when the server closes it (HTTP/1.0 servers do).

    A call the server resets or drops before answering (a full listen backlog does
    that) is sent again, as an agent would, and counted in `resets`.
    """

    def __init__(self, url: str, headers: dict[str, str] | None = None) -> None:
        parts = urllib.parse.urlsplit(url)
        self.conn = http.client.HTTPConnection(
            parts.hostname or "127.0.0.1", parts.port, timeout=120
        )
        self.headers = {"Content-Type": "application/json", **(headers or {})}
        self.resets = 0

    def call(self, method: str, path: str, body: object = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        for attempt in range(10):
            try:
                self.conn.request(method, path, body=data, headers=self.headers)
                response = self.conn.getresponse()
                payload = response.read()
                if (
                    response.getheader("Connection", "").lower() == "close"
                    or response.version == 10
                ):
                    self.conn.close()
                return response.status, json.loads(payload or b"null")
            except (ConnectionError, http.client.RemoteDisconnected, http.client.BadStatusLine):
                self.conn.close()
                self.resets += 1
                time.sleep(0.01 * (attempt + 1))
        raise ConnectionError(f"{method} {path}: reset 10 times in a row")


class CoordServer:
    def __init__(self, url: str, agent: str) -> None:
        self.http = Http(url)
        status, out = self.http.call(
            "POST", "/call", {"op": "whoami", "args": {"family": "bench", "project": PROJECT}}
        )
        assert status == 200 and out["ok"], out
        self.session = out["result"]["session_id"]
        self.name = out["result"]["name"]

    def _accept(self, task: int) -> bool:
        status, out = self.http.call(
            "POST",
            "/call",
            {"op": "task_accept", "args": {"session": self.session, "task": f"T{task}"}},
        )
        if status == 200 and out["ok"]:
            return True
        if status == 409 and out.get("error") == "taken":
            # A call sent again after a reset may find the task taken by this very session.
            return str(out.get("message", "")).endswith(f"({self.name})")
        raise RuntimeError(f"coord-server task_accept T{task}: {status} {out}")

    async def claim(self, task: int) -> tuple[bool, bool]:
        won = self._accept(task)
        return won, won

    async def next(self, pool: list[int]) -> tuple[int | None, bool]:
        status, out = self.http.call(
            "POST",
            "/call",
            {
                "op": "tasks",
                "args": {"project": PROJECT, "status": "open", "session": self.session},
            },
        )
        assert status == 200 and out["ok"], out
        open_ids = [int(t["task"][1:]) for t in out["result"]]
        if not open_ids:
            return None, False
        task = random.choice(open_ids)
        return task, self._accept(task)

    async def close(self) -> None:
        self.http.conn.close()


class CoordMcpServer:
    def __init__(self, address: str, agent: str) -> None:
        url, _, token = address.partition("#")
        self.http = Http(url, {"Authorization": f"Bearer {token}"})
        self.agent = agent

    def _claim(self, task: int) -> bool:
        status, out = self.http.call(
            "POST",
            "/claims",
            {"engineer": self.agent, "claims": [{"type": "file", "pattern": f"tasks/{task}"}]},
        )
        if status == 200 and out["claim_ids"]:
            return True
        if status == 409 and out["conflicts"]:
            return False
        raise RuntimeError(f"coord-mcp-server POST /claims tasks/{task}: {status} {out}")

    async def claim(self, task: int) -> tuple[bool, bool]:
        won = self._claim(task)
        return won, won

    async def next(self, pool: list[int]) -> tuple[int | None, bool]:
        status, out = self.http.call("GET", "/claims")
        assert status == 200, out
        held = {c["pattern"] for c in out["claims"] if c.get("released_at") is None}
        free = [task for task in pool if f"tasks/{task}" not in held]
        if not free:
            return None, False
        task = random.choice(free)
        return task, self._claim(task)

    async def close(self) -> None:
        self.http.conn.close()


class AgentMail:
    """The MCP SDK's streamable-HTTP client, entered in `start` and left in `close`."""

    def __init__(self, url: str, agent: str) -> None:
        self.url = url
        self.agent = agent

    async def start(self) -> None:
        """Connect; the parent registered this agent (bench/agent_peers.py: 64 agents
        registering at once time out on the peer's archive lock)."""
        from contextlib import AsyncExitStack

        from mcp import Client as MCPClient

        self.stack = AsyncExitStack()
        self.client = await self.stack.enter_async_context(MCPClient(self.url, mode="legacy"))
        self.errors = 0

    async def _tool(self, name: str, arguments: dict[str, Any]) -> Any:
        result = await self.client.call_tool(name, arguments)
        if result.is_error:
            raise RuntimeError(f"mcp-agent-mail {name}: {result.content}")
        return result.structured_content

    async def claim(self, task: int) -> tuple[bool, bool]:
        import anyio

        arguments = {
            "project_key": PROJECT,
            "agent_name": self.agent,
            "paths": [f"tasks/{task}"],
            "exclusive": True,
            "ttl_seconds": 3600,
        }
        out = None
        try:
            with anyio.move_on_after(CALL_BUDGET_S):
                out = await self._tool("file_reservation_paths", arguments)
        except Exception:  # the tool failed (its archive lock timed out): not told it won
            out = None
        if out is None:  # failed, or no answer within the budget
            self.errors += 1
            return False, False
        granted = any(g["path_pattern"] == f"tasks/{task}" for g in out["granted"])
        return granted, granted and not out["conflicts"]

    async def next(self, pool: list[int]) -> tuple[int | None, bool]:
        raise NotImplementedError("no drain: see bench/agent_peers.py")

    async def close(self) -> None:
        await self.stack.aclose()


PG_CLAIM = "UPDATE tasks SET state = 'claimed', claimed_by = %s WHERE id = %s AND state = 'pending'"
PG_NEXT = (
    "UPDATE tasks SET state = 'claimed', claimed_by = %s WHERE id = (SELECT id FROM tasks"
    " WHERE state = 'pending' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id"
)


class Postgres:
    def __init__(self, dsn: str, agent: str) -> None:
        import psycopg

        self.agent = agent
        self.conn = psycopg.connect(dsn, autocommit=True, prepare_threshold=0)

    async def claim(self, task: int) -> tuple[bool, bool]:
        won = self.conn.execute(PG_CLAIM, (self.agent, task)).rowcount == 1
        return won, won

    async def next(self, pool: list[int]) -> tuple[int | None, bool]:
        row = self.conn.execute(PG_NEXT, (self.agent,)).fetchone()
        return (None, False) if row is None else (int(row[0]), True)

    async def close(self) -> None:
        self.conn.close()


ADAPTERS: dict[str, Any] = {
    "coordd": Coordd,
    "coord-server": CoordServer,
    "coord-mcp-server": CoordMcpServer,
    "mcp-agent-mail": AgentMail,
    "postgresql": Postgres,
}


async def answer(adapter: Adapter, request: dict[str, Any]) -> dict[str, Any]:
    """One request line's answer (see the module's docstring)."""
    clock = time.perf_counter
    if request["op"] == "race":
        started = clock()
        won, clean = await adapter.claim(int(request["id"]))
        return {"won": won, "clean": clean, "us": (clock() - started) * 1e6}
    latencies: list[float] = []
    if request["op"] == "own":
        won_count = 0
        for task in request["ids"]:
            started = clock()
            won_count += (await adapter.claim(int(task)))[0]
            latencies.append((clock() - started) * 1e6)
        return {"won": won_count, "latencies_us": latencies}
    assert request["op"] == "drain", request
    pool = [int(t) for t in request["ids"]]
    mine: list[int] = []
    while True:
        started = clock()
        task, won = await adapter.next(pool)
        if task is None:
            break
        latencies.append((clock() - started) * 1e6)
        if won:
            mine.append(task)
    return {"ids": mine, "attempts": len(latencies), "latencies_us": latencies}


async def serve(peer: str, address: str, agent: str) -> None:
    import anyio

    adapter = ADAPTERS[peer](address, agent)
    if hasattr(adapter, "start"):
        await adapter.start()
    print("ready", flush=True)
    try:
        while line := await anyio.to_thread.run_sync(sys.stdin.readline):
            out = await answer(adapter, json.loads(line))
            http_calls = getattr(adapter, "http", None)
            # Calls sent again after a reset, or tools that failed: so far, in all.
            out["resets"] = getattr(http_calls or adapter, "resets", 0) + getattr(
                adapter, "errors", 0
            )
            print(json.dumps(out), flush=True)
    finally:
        await adapter.close()


def main() -> None:
    import anyio

    peer, address, agent = sys.argv[1:4]
    anyio.run(serve, peer, address, agent)


if __name__ == "__main__":
    main()

"""The peers' bench (issue 46) counts winners and double claims right, without the peers.

The peers themselves are installed and run only by `make bench-peers`; here a fake
adapter and a fake coord-server (loopback HTTP) stand in for them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
import pytest
from bench.agent_peer_worker import CoordServer, answer
from bench.agent_peers import Figures, PeerRun, Race, render


class Fake:
    """Claims from a shared dict; `lie` says yes to a task already taken (a broken peer)."""

    def __init__(self, held: dict[int, str], agent: str, lie: bool = False) -> None:
        self.held, self.agent, self.lie = held, agent, lie

    async def claim(self, task: int) -> tuple[bool, bool]:
        won = self.held.setdefault(task, self.agent) == self.agent or self.lie
        return won, won

    async def next(self, pool: list[int]) -> tuple[int | None, bool]:
        free = [t for t in pool if t not in self.held]
        if not free:
            return None, False
        return free[0], (await self.claim(free[0]))[0]

    async def close(self) -> None:
        pass


def test_a_race_own_tasks_and_a_drain_are_answered() -> None:
    held: dict[int, str] = {}
    a, b = Fake(held, "a"), Fake(held, "b")
    race = [anyio.run(answer, x, {"op": "race", "id": 7}) for x in (a, b)]
    assert [r["won"] for r in race] == [True, False]
    own = anyio.run(answer, a, {"op": "own", "ids": [1, 2, 3]})
    assert own["won"] == 3 and len(own["latencies_us"]) == 3
    drained = anyio.run(answer, b, {"op": "drain", "ids": [1, 2, 10, 11]})
    assert drained["ids"] == [10, 11] and drained["attempts"] == 2


@pytest.fixture
def coord_server() -> Iterator[str]:
    """coord-server's `/call` for whoami and task_accept, as 0.13.1 answers them."""
    accepted: dict[str, str] = {}
    names = iter(f"bench-{n:02d}" for n in range(1, 100))

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            args = request["args"]
            if request["op"] == "whoami":
                name = next(names)
                code, out = 200, {"ok": True, "result": {"session_id": name, "name": name}}
            elif args["task"] in accepted:
                holder = accepted[args["task"]]
                message = f"{args['task']} is accepted ({holder})"
                code, out = 409, {"ok": False, "error": "taken", "message": message}
            else:
                accepted[args["task"]] = args["session"]
                code, out = 200, {"ok": True, "result": {"status": "accepted"}}
            body = json.dumps(out).encode()
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_coord_server_one_winner_and_a_resent_call_that_finds_its_own_claim(
    coord_server: str,
) -> None:
    first, second = CoordServer(coord_server, "w0"), CoordServer(coord_server, "w1")
    assert anyio.run(first.claim, 5) == (True, True)
    assert anyio.run(second.claim, 5) == (False, False)
    # Sent again after a reset: the task is taken, by this very session.
    assert anyio.run(first.claim, 5) == (True, True)
    for adapter in (first, second):
        anyio.run(adapter.close)


def test_the_table_shows_wrong_rounds_and_a_peer_that_did_not_start() -> None:
    coordd = Figures(races={16: Race(16, [1, 1], [1, 1], [100.0] * 32)})
    coordd.races[64] = Race(64, [1], [1], [200.0] * 64)
    coordd.drain_rate, coordd.own_rate = 1000.0, 2000.0
    peer = Figures(races={16: Race(16, [1, 2], [1, 1], [400.0] * 32)})
    peer.races[64] = Race(64, [64], [4], [800.0] * 64)
    peer.drain_rate, peer.own_rate, peer.drain_double = 100.0, 500.0, 3
    runs = [
        PeerRun("advisory", "advisory==1.0", "HTTP", "notes", peer=peer, coordd=coordd),
        PeerRun("broken", "broken==1.0", "HTTP", "", error="`pip install broken==1.0` failed"),
    ]
    text = "\n".join(render(runs, {}))
    assert "1-2 (1 of 2 rounds != 1)" in text
    assert "64 (1 of 1 rounds != 1); with no conflict listed: 4-4" in text
    assert "| 4.00x |" in text and "| 0.10x | 3, 0 | 0.25x |" in text
    assert "not measured: `pip install broken==1.0` failed" in text

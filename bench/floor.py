"""The floor: a deliberately bare server of coordd's own design, for `make bench`.

    python -m bench.floor SOCKET DB TASKS

A trio accept loop, the same 4-byte framing and msgspec envelope, each frame
handled inline in its connection's loop (no task per request), one writer
thread with group commit running only the bare conditional UPDATE, and
replies shaped as coordd's (a claim answers `{"won", "task"}` with the whole
task). It is what this architecture costs at minimum; coordd's ratios to it,
measured in the same run, say what coordd adds. The daemon never imports it.
"""

from __future__ import annotations

import os
import queue
import sqlite3
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any, NamedTuple

import msgspec
import trio

from coordd_wire.framing import FrameDecoder, encode_frame

TASK = (
    "json_object('id', id, 'project', 'p', 'kind', 'task', 'title', title, 'body', '',"
    " 'state', state, 'priority', 0, 'tags', json('[]'), 'created_by', NULL,"
    " 'created_at', created_at, 'updated_at', created_at, 'claimed_by', claimed_by,"
    " 'claimed_at', NULL, 'lease_expires_at', NULL, 'fence', fence, 'attempts', fence,"
    " 'result', NULL)"
)
CLAIM = (
    "UPDATE tasks SET state = 'claimed', claimed_by = ?, fence = fence + 1"
    f" WHERE id = ? AND state = 'pending' RETURNING {TASK}"
)


class Request(msgspec.Struct):
    jsonrpc: str
    method: str
    id: int | str | None = None
    params: msgspec.Raw = msgspec.Raw(b"null")


class ClaimParams(msgspec.Struct):
    id: int
    agent: str
    request_key: str | None = None  # sent only to a server whose features name it


requests = msgspec.json.Decoder(Request)
claims = msgspec.json.Decoder(ClaimParams)
INFO = (
    b'{"version":"floor","protocol":1,"features":%s,"pid":%d,"db_path":"","started_at":'
    b'"2026-01-01T00:00:00.000000Z","counts":{},"last_seq":0}'
)


def reply(request_id: Any, result: bytes) -> bytes:
    return encode_frame(
        b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (msgspec.json.encode(request_id), result)
    )


Replies = trio.MemorySendChannel[bytes]


class Claim(NamedTuple):
    """A queued claim, and where its answer goes."""

    task_id: int
    agent: str
    request_key: str | None
    request_id: Any
    out: Replies


class Writer:
    """One thread owns the write connection; every queued claim of a batch in one COMMIT."""

    #: What `server.info.features` lists: the clients send what a feature adds only to a
    #: server that names it.
    features = b"[]"

    def __init__(self, path: str, token: trio.lowlevel.TrioToken) -> None:
        self.queue: queue.SimpleQueue[Claim] = queue.SimpleQueue()
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = FULL")
        self.token = token
        self.info = INFO % (self.features, os.getpid())

    def start(self) -> None:
        threading.Thread(target=self.run, daemon=True).start()

    def run(self) -> None:
        try:
            while True:
                self.run_group()
        except BaseException:  # the clients would wait for answers forever: end loudly
            traceback.print_exc()
            os._exit(1)

    def run_group(self) -> None:
        batch = [self.queue.get()]
        while len(batch) < 256:
            try:
                batch.append(self.queue.get_nowait())
            except queue.Empty:
                break
        self.conn.execute("BEGIN IMMEDIATE")
        answers = [
            (out, reply(request_id, result)) for out, request_id, result in self.claim(batch)
        ]
        self.conn.execute("COMMIT")  # nothing is answered before it returns
        self.token.run_sync_soon(deliver, answers)  # one loop wake-up per batch

    def claim(self, batch: list[Claim]) -> list[tuple[Replies, Any, bytes]]:
        """The group's claims inside its transaction: each one's channel, id and result."""
        results = []
        for task_id, agent, _key, request_id, out in batch:
            row = self.conn.execute(CLAIM, (agent, task_id)).fetchall()
            if row:
                result = b'{"won":true,"task":%s}' % row[0][0].encode()
            else:
                task = self.conn.execute(f"SELECT {TASK} FROM tasks WHERE id = ?", (task_id,))
                result = b'{"won":false,"task":%s}' % task.fetchone()[0].encode()
            results.append((out, request_id, result))
        return results


def deliver(answers: list[tuple[Replies, bytes]]) -> None:
    """On the trio thread: hand each reply to its connection's sender."""
    for out, frame in answers:
        out.send_nowait(frame)


async def serve_connection(stream: trio.SocketStream, writer: Writer) -> None:
    send, receive = trio.open_memory_channel[bytes](float("inf"))

    async def send_replies() -> None:
        async for frame in receive:
            await stream.send_all(frame)

    async with stream, trio.open_nursery() as nursery:
        nursery.start_soon(send_replies)
        decoder = FrameDecoder()
        while data := await stream.receive_some(65536):
            decoder.feed(data)
            while (payload := decoder.next_frame()) is not None:
                request = requests.decode(payload)
                if request.method == "task.claim":
                    params = claims.decode(request.params)
                    claim = Claim(params.id, params.agent, params.request_key, request.id, send)
                    writer.queue.put(claim)
                elif request.method == "server.info":
                    send.send_nowait(reply(request.id, writer.info))
                else:  # ping
                    send.send_nowait(reply(request.id, b'{"pong":true}'))
        nursery.cancel_scope.cancel()


def prepare(path: str, tasks: int) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(
        "CREATE TABLE tasks (id INTEGER PRIMARY KEY, title TEXT NOT NULL, state TEXT NOT NULL,"
        " claimed_by TEXT, fence INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL)"
    )
    conn.executemany(
        "INSERT INTO tasks (title, state, created_at) VALUES (?, 'pending',"
        " '2026-01-01T00:00:00.000000Z')",
        ((f"t{n}",) for n in range(tasks)),
    )
    conn.commit()
    conn.close()


async def main(socket_path: str, db_path: str, writer_type: Callable[..., Writer] = Writer) -> None:
    """Serve claims on `db_path`; `writer_type` is what runs them (bench/floor_rows.py)."""
    writer = writer_type(db_path, trio.lowlevel.current_trio_token())
    writer.start()
    listener = trio.SocketListener(await _bind(socket_path))
    print("ready", flush=True)

    async def handle(stream: trio.SocketStream) -> None:
        try:
            await serve_connection(stream, writer)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    await trio.serve_listeners(handle, [listener])


async def _bind(path: str) -> trio.socket.SocketType:
    sock = trio.socket.socket(trio.socket.AF_UNIX, trio.socket.SOCK_STREAM)
    await sock.bind(path)
    sock.listen(1024)
    return sock


if __name__ == "__main__":
    prepare(sys.argv[2], int(sys.argv[3]))
    trio.run(main, sys.argv[1], sys.argv[2])

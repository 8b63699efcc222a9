"""The floor writing coordd's rows: `bench/floor.py`'s bare server, on a board coordd made.

    python -m bench.floor_rows SOCKET DB [--without-index NAME]... [--without-events]

The bare floor (`bench/floor.py`) runs one UPDATE on a table of six columns and no
index; coordd's claim also writes what the protocol asks of it: the task's full row,
its entries in the pending queue and live-claim indexes (`task.claim_next`, the
reaper), and an event carrying the task (PROTOCOL.md section 7) linked to the task's
previous one (its history). This server is the floor's accept loop, framing, inline
frames, writer thread and group commit, unchanged, running coordd's own claim
statement (`claims.CLAIM_PENDING`) and storing the group's events with coordd's own
statements (`write_store.INSERT_EVENT`, `SET_NEWEST_EVENT`), on a board coordd
posted (`prepare_board`). Nothing else of the daemon: no admission, no routing,
no transaction context, answers written by the event loop as the floor does.

So three servers tell the gap apart: coordd / this one is what coordd's daemon adds
over the bare design writing the same rows; this one / the bare floor is what the
rows cost. `--without-index` and `--without-events` take parts of the rows away, to
say what each costs (`python -m bench.floor_anatomy`); a board served that way is
no longer a coordd board, which is why the copy the bench serves is thrown away.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import trio

from bench import floor
from bench.harness import Daemon, post_tasks
from coordd.clock import format_time
from coordd.store.claims import CLAIM_PENDING
from coordd.store.transaction import ROW_COLUMNS, TaskRow
from coordd.store.write_store import INSERT_EVENT, SET_NEWEST_EVENT
from coordd_wire import params as P


class ClaimedEvent(msgspec.Struct):
    """A `task.claimed` event as coordd sends and stores it (members in its order)."""

    seq: int
    at: str
    type: str
    task_id: int
    agent: str
    task: msgspec.Raw


event_encoder = msgspec.json.Encoder()


class RowsWriter(floor.Writer):
    """The floor's writer running coordd's claim and storing its event, per group."""

    def __init__(
        self,
        path: str,
        token: trio.lowlevel.TrioToken,
        *,
        without_indexes: tuple[str, ...] = (),
        events: bool = True,
    ) -> None:
        super().__init__(path, token)
        for name in without_indexes:
            self.conn.execute(f'DROP INDEX "{name}"')
        self.events = events
        (last_seq,) = self.conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()
        self.next_seq = int(last_seq) + 1

    def claim(self, batch: list[floor.Claim]) -> list[tuple[floor.Replies, Any, bytes]]:
        now = datetime.now(UTC)
        now_text = format_time(now)
        until = format_time(now + timedelta(seconds=P.DEFAULT_LEASE_S))
        args = {"now": now_text, "until": until, "key": None}
        results = []
        events: list[tuple[Any, ...]] = []
        newest: dict[int, int] = {}
        for task_id, agent, request_id, out in batch:
            values = self.conn.execute(CLAIM_PENDING, {**args, "agent": agent, "id": task_id})
            won = values.fetchall()
            if not won:
                (task,) = self.conn.execute(
                    f"SELECT {ROW_COLUMNS} FROM tasks WHERE id = ?", (task_id,)
                ).fetchall()
                results.append((out, request_id, b'{"won":false,"task":%s}' % task[-1].encode()))
                continue
            row = TaskRow(*won[0])
            event = ClaimedEvent(
                self.next_seq, now_text, "task.claimed", row.id, agent, msgspec.Raw(row.json)
            )
            previous = newest.get(row.id, row.event_seq)
            events.append((event.seq, event.type, row.project, event.at,
                           event_encoder.encode(event).decode(), row.id, previous))  # fmt: skip
            newest[row.id] = self.next_seq
            self.next_seq += 1
            results.append((out, request_id, b'{"won":true,"task":%s}' % row.json.encode()))
        if self.events and events:
            self.conn.executemany(INSERT_EVENT, events)
            self.conn.execute(SET_NEWEST_EVENT, (msgspec.json.encode(list(newest.items())),))
        return results


def prepare_board(workdir: Path, name: str, tasks: int) -> tuple[Path, int]:
    """A board coordd made, with `tasks` pending tasks posted by a client: its file and
    the first task's id. The daemon stops before the floor opens the file."""
    daemon = Daemon(workdir, name=name)
    try:
        first = post_tasks(daemon, tasks)
    finally:
        daemon.stop()
    return daemon.db, first


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.floor_rows")
    parser.add_argument("socket")
    parser.add_argument("db", help="a board coordd made (prepare_board); it is written to")
    parser.add_argument("--without-index", action="append", default=[], metavar="NAME")
    parser.add_argument("--without-events", action="store_true")
    args = parser.parse_args(argv)

    def writer(path: str, token: trio.lowlevel.TrioToken) -> RowsWriter:
        return RowsWriter(
            path, token, without_indexes=tuple(args.without_index), events=not args.without_events
        )

    trio.run(floor.main, args.socket, args.db, writer)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except sqlite3.Error as exc:  # a board that is not coordd's, or an index it lacks
        sys.exit(f"floor_rows: {exc}")

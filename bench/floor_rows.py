"""The floor writing coordd's rows: `bench/floor.py`'s bare server, on a board coordd made.

    python -m bench.floor_rows SOCKET DB [--without-index NAME]... [--without-events]

The bare floor (`bench/floor.py`) runs one UPDATE on a table of six columns and no
index; coordd's claim also writes what the protocol asks of it: the task's full row,
its entries in the pending queue and live-claim indexes (`task.claim_next`, the
reaper), and an event carrying the task (PROTOCOL.md section 7) linked to the task's
previous one (its history). This server is the floor's accept loop, framing, inline
frames, writer thread and group commit, unchanged, running coordd's own claim
statement (`claims.CLAIM_PENDING`, with the `request_key` the clients send a server
that lists `claim_request_key`, stored in the row as coordd stores it) and storing
each group's events as coordd does (`transaction.EventOut`, `write_store.link_events`,
`INSERT_EVENT`, `SET_NEWEST_EVENT`), on a board coordd posted (`prepare_board`).
Nothing else of the daemon: no admission, routing, transaction context, last-seen
writes or checkpointer thread (SQLite's own automatic checkpoint runs in the writer,
as in the bare floor), and the answers are written by the event loop, as the bare
floor's are, where coordd's writer writes them itself.

So three servers tell the gap apart: coordd / this one is what coordd's daemon adds
over the bare design writing the same rows; this one / the bare floor is what the
rows cost. `--without-index` and `--without-events` take parts of the rows away, to
say what each costs (`python -m bench.floor_anatomy`); a board served that way is
no longer a coordd board, which is why the copy the bench serves is thrown away.
"""

from __future__ import annotations

import argparse
import functools
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
from coordd.store.transaction import ROW_COLUMNS, CommittedEvent, EventOut, TaskRow, encoder
from coordd.store.write_store import INSERT_EVENT, SET_NEWEST_EVENT, link_events
from coordd_wire import params as P


class RowsWriter(floor.Writer):
    """The floor's writer running coordd's claim and storing its event, per group."""

    #: The clients then send each claim's `request_key`, as they do to coordd, and the
    #: claim stores it in the row as coordd's does.
    features = b'["claim_request_key"]'

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
        results = []
        events: list[CommittedEvent] = []
        for claim in batch:
            args = {"agent": claim.agent, "now": now_text, "until": until, "id": claim.task_id}
            won = self.conn.execute(CLAIM_PENDING, {**args, "key": claim.request_key}).fetchall()
            if not won:
                current = self.conn.execute(
                    f"SELECT {ROW_COLUMNS} FROM tasks WHERE id = ?", (claim.task_id,)
                ).fetchone()
                answer = b'{"won":false,"task":%s}' % TaskRow(*current).json.encode()
                results.append((claim.out, claim.request_id, answer))
                continue
            row = TaskRow(*won[0])
            if self.events:  # as `Txn.emit` makes it, and `append_events` stores it
                event = EventOut(seq=self.next_seq, at=now_text, type="task.claimed",
                                 task_id=row.id, agent=claim.agent, task=row.raw)  # fmt: skip
                events.append(
                    CommittedEvent(event.seq, event.type, row.project, row.json,
                                   encoder.encode(event), row.id, now_text, row.event_seq)
                )  # fmt: skip
                self.next_seq += 1
            answer = b'{"won":true,"task":%s}' % row.json.encode()
            results.append((claim.out, claim.request_id, answer))
        if events:
            rows, newest = link_events(events)
            self.conn.executemany(INSERT_EVENT, rows)
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

    writer = functools.partial(
        RowsWriter, without_indexes=tuple(args.without_index), events=not args.without_events
    )
    trio.run(floor.main, args.socket, args.db, writer)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except sqlite3.Error as exc:  # a board that is not coordd's, or an index it lacks
        sys.exit(f"floor_rows: {exc}")

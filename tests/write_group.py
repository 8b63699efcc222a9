"""One group commit run in-process, as the writer's fast path runs it.

The hot-path guards count what a group of claims writes (tests/integration),
and the bench's diagnostics time the same group (bench/diagnostics.py): both
drive the store without a daemon, so both use this one copy of the writer's
sequence, kept beside the tests that pin it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TypeVar

from coordd.store import transaction
from coordd.store.write_store import SqliteWriteStore

Params = TypeVar("Params")
Outcome = TypeVar("Outcome")


def run_group(
    store: SqliteWriteStore,
    fn: Callable[[transaction.Txn, Params], Outcome],
    params: Sequence[Params],
    seen: dict[str, datetime],
) -> list[Outcome]:
    """BEGIN, each command, the group's events in one call, COMMIT
    (`store/writer.py`, `Writer._run_group`); `seen` is the writer's last-seen cache."""
    now, last_seq = store.begin()
    next_seq = last_seq + 1
    events: list[transaction.CommittedEvent] = []
    results: list[Outcome] = []
    staged: dict[str, datetime] = {}
    for p in params:
        txn = transaction.Txn(store.db, now, seen, next_seq, group_seen=staged)
        results.append(fn(txn, p))
        next_seq = txn.next_seq
        events += txn.events
        staged.update(txn.seen)
    if events:
        store.append_events(events)
    store.commit(events[-1].seq if events else None, ())
    seen.update(staged)  # the last-seen writes are remembered after COMMIT, as the writer does
    return results

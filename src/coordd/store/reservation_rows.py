"""Reservation rows as the store reads them: liveness in SQL, the wire's shape, and the
candidates of a transaction read once per index key (`reservations.py` decides with them).

Apart from the decisions so that the modules that only ask "is it live?" (messages,
holding, edits) and the matching read the same SQL, written once.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

from coordd.store.sql import Db
from coordd.store.transaction import in_list
from coordd_wire.wire import Reservation

#: Live now (`:now`): not expired and, when task-bound, its task still held on a live lease.
LIVE = (
    "r.expires_at > :now AND (r.task_id IS NULL OR EXISTS (SELECT 1 FROM tasks AS t"
    " WHERE t.id = r.task_id AND t.state = 'claimed' AND t.claimed_by = r.agent"
    " AND t.lease_expires_at > :now))"
)
COLUMNS = (
    "r.id, r.project, r.agent, r.pattern, r.exclusive, r.reason, r.task_id,"
    " r.created_at, r.expires_at, r.ttl_s"
)


def as_wire(values: Sequence[Any]) -> Reservation:
    """A row of `COLUMNS` as the wire has it (a whole `ttl_s` sent as an integer)."""
    rid, project, agent, pattern, exclusive, reason, task_id, created_at, expires_at, ttl = values
    return Reservation(
        id=rid, project=project, agent=agent, pattern=pattern, exclusive=bool(exclusive),
        reason=reason, task_id=task_id, created_at=created_at, expires_at=expires_at,
        ttl_s=int(ttl) if float(ttl).is_integer() else ttl,
    )  # fmt: skip


#: What a candidate is matched by: two columns read a third as fast as all of them,
#: and a guard reads every candidate of every path (issue 44). Rows that match are
#: then read whole (`read_whole`).
MATCHED = "r.id, r.pattern"
PATTERN = 1


def read_whole(conn: Db, ids: list[int]) -> dict[int, Reservation]:
    """The reservations `ids` (matched in this transaction), as the wire has them."""
    found: dict[int, Reservation] = {}
    for start in range(0, len(ids), 500):
        args: dict[str, Any] = {}
        keys = in_list("id", ids[start : start + 500], args)
        sql = f"SELECT {COLUMNS} FROM reservations AS r WHERE r.id IN {keys}"
        found.update((int(row[0]), as_wire(row)) for row in conn.execute(sql, args).fetchall())
    return found


def rows_of(conn: Db, sql: str, args: dict[str, Any]) -> list[Reservation]:
    return [as_wire(values) for values in conn.execute(sql, args).fetchall()]


Row = Sequence[Any]


class ByPrefix:
    """One transaction's candidate rows (`MATCHED`, with `r.prefix`), by index key,
    each key read once however many paths name it.

    Every wildcard-leading reservation has the key "", so it is a candidate of every
    path: read per path, a 256-path request read each of them 256 times (issue 44).
    `where` and `args` are the statement's filter; keys are added to `args` per read.
    """

    def __init__(self, conn: Db, where: str, args: dict[str, Any]) -> None:
        self._conn, self._where, self._args = conn, where, args
        self._rows: dict[str, list[Row]] = {}

    def rows(self, keys: Sequence[str]) -> list[Row]:
        """The candidates whose key is one of `keys`, in id order."""
        missing = [key for key in dict.fromkeys(keys) if key not in self._rows]
        for start in range(0, len(missing), 500):
            chunk = missing[start : start + 500]
            for key in chunk:
                self._rows[key] = []
            args = dict(self._args)
            sql = (
                f"SELECT {MATCHED}, r.prefix FROM reservations AS r WHERE {self._where}"
                f" AND r.prefix IN {in_list('key', chunk, args)} ORDER BY r.id"
            )
            for row in self._conn.execute(sql, args).fetchall():
                self._rows[row[2]].append(row)
        runs = [self._rows[key] for key in dict.fromkeys(keys) if self._rows[key]]
        if len(runs) == 1:
            return runs[0]  # the common case: one key holds them all, in id order
        return list(heapq.merge(*runs, key=row_id))


def row_id(row: Row) -> int:
    return int(row[0])

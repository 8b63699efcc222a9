"""The one SQL interface the protocol logic is written against, and its two dialects.

Every query in `claims`, `holding`, `writes`, `reads` and `reservations` is
written once, in SQLite's flavour, against `Db`: `connections.SqliteDb` (an
`sqlite3.Connection` that names its dialect) is one, and
`coordd.store.postgres.connection.PgDb` is the other,
translating each statement once (cached) into PostgreSQL's: placeholders,
`json_object`, `json_group_array`, and SQLite's `INDEXED BY` hints. The few
functions the shared SQL calls that PostgreSQL lacks (`instr`,
`unicode_lower`, `json_each` over a text array) are created by the
PostgreSQL schema with SQLite's meaning, so the statements stay identical.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any, Protocol


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchall(self) -> list[Any]: ...

    def fetchone(self) -> Any: ...


class Db(Protocol):
    """What a store function may do with its connection (sqlite3's subset)."""

    #: The one statement whose text differs: where the newest seq is kept.
    last_seq_sql: str

    def execute(self, sql: str, parameters: Any = (), /) -> Cursor: ...

    def executemany(self, sql: str, seq_of_parameters: Iterable[Any], /) -> Cursor: ...


#: SQLite keeps the newest AUTOINCREMENT value here; PostgreSQL keeps the
#: team's newest seq in `coordd_meta` (written by every group that appends).
SQLITE_LAST_SEQ = "SELECT seq FROM sqlite_sequence WHERE name = 'events'"
POSTGRES_LAST_SEQ = "SELECT last_seq FROM coordd_meta WHERE id = 1"

_INDEXED_BY = re.compile(r"\s+INDEXED BY \w+")
_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
_RENAMED = (
    (re.compile(r"\bjson_object\("), "json_build_object("),
    (re.compile(r"\bjson_group_array\("), "json_agg("),
)


@functools.lru_cache(maxsize=1024)
def to_postgres(sql: str) -> str:
    """One SQLite-flavoured statement in PostgreSQL's flavour (psycopg placeholders).

    Quoted literals pass through untouched; outside them `%` is escaped,
    `:name` becomes `%(name)s` and `?` becomes `%s`. Statements are a fixed
    set of shapes (values are always bound), so the cache stays small.
    """
    pieces = sql.split("'")
    for index in range(0, len(pieces), 2):  # the even pieces are outside quotes
        text = _INDEXED_BY.sub("", pieces[index]).replace("%", "%%")
        for pattern, replacement in _RENAMED:
            text = pattern.sub(replacement, text)
        text = _NAMED.sub(r"%(\1)s", text).replace("?", "%s")
        pieces[index] = text
    return "'".join(pieces)

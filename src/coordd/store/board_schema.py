"""Schema step of docs/PROTOCOL-1.2.md section 1b: the board's identity.

A board is one store: an SQLite file, or a team database. Clients that reach
a daemon cannot tell two boards apart by what they hold (two new boards are
both empty), so each store is given a random id once, when this step runs,
and never again: it is what `ping` and `server.info` serve as `board_id`, and
what a tab, `coord doctor` and the rendezvous compare. A store created by an
earlier coordd gets its id when it is upgraded; `coordd migrate` copies it
to the team store (`store/postgres/migrate.py`), so a migrated board keeps
its id. The PostgreSQL twin is in `store/postgres/board_schema.py`.
"""

from __future__ import annotations

BOARD: tuple[str, ...] = (
    "CREATE TABLE board (only_row INTEGER PRIMARY KEY CHECK (only_row = 1),"
    " board_id TEXT NOT NULL)",
    # 64 random bits from SQLite's own generator, as 16 hex digits.
    "INSERT INTO board (only_row, board_id) VALUES (1, lower(hex(randomblob(8))))",
)

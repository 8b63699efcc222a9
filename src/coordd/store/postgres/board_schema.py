"""The team store's twin of `store/board_schema.py` (docs/PROTOCOL-1.2.md section 1b)."""

from __future__ import annotations

BOARD: tuple[str, ...] = (
    "CREATE TABLE board (only_row INTEGER PRIMARY KEY CHECK (only_row = 1),"
    ' board_id TEXT COLLATE "C" NOT NULL)',
    # 64 bits as 16 hex digits; md5 of server randomness, the instant and the backend's pid
    # (gen_random_uuid needs PostgreSQL 13, pgcrypto before it).
    "INSERT INTO board (only_row, board_id) VALUES (1, substr(md5(random()::text"
    " || clock_timestamp()::text || pg_backend_pid()::text), 1, 16))",
)

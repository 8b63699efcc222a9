"""Where the daemon keeps its database by default (PROTOCOL.md section 8)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from coordd_client.protocol.paths import state_dir

DB_ENV = "COORDD_DB"


def default_db_path(environ: Mapping[str, str] | None = None) -> Path:
    """`$COORDD_DB`, else `coord.db` in the user's state directory."""
    env = os.environ if environ is None else environ
    if env.get(DB_ENV):
        return Path(env[DB_ENV])
    return state_dir(env) / "coord.db"


STORE_ENV = "COORDD_STORE"
TEAM_SCHEMES = ("postgresql://", "postgres://")


def is_team_store(location: str) -> bool:
    return location.startswith(TEAM_SCHEMES)


def resolve_store(
    store: str | None, db: Path | None, environ: Mapping[str, str] | None = None
) -> tuple[Path | None, str | None]:
    """(SQLite path, PostgreSQL DSN), exactly one set, from the flags and the environment.

    Precedence: `--store`, `$COORDD_STORE`, `--db`, `$COORDD_DB`, the state
    directory. A store is `postgresql://...` (team mode), `sqlite:PATH`, or a
    plain file path. `--store` with `--db` is refused by the parser first.
    """
    env = os.environ if environ is None else environ
    location = store or env.get(STORE_ENV) or None
    if location is None:
        return (db or default_db_path(env)), None
    if is_team_store(location):
        return None, location
    if location.startswith("sqlite:"):
        location = location[len("sqlite:") :]
    if not location:
        raise ValueError("an empty store location: give a file path or a postgresql:// DSN")
    return Path(location), None

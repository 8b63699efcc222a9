"""Where the daemon keeps its database by default (PROTOCOL.md section 8)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

# Clients find the daemon of the default database through its lock file, so the
# rule is the wire contract's, written once.
from coordd_client.protocol.paths import DB_ENV, default_db_path

__all__ = ["DB_ENV", "STORE_ENV", "default_db_path", "is_team_store", "resolve_store"]


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

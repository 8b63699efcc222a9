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

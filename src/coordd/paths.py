"""Where the daemon keeps its database and logs by default (PROTOCOL.md section 8)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

DB_ENV = "COORDD_DB"


def state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The user's state directory for coordd: XDG on Linux, Application Support on macOS."""
    env = os.environ if environ is None else environ
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "coordd"
    base = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "coordd"


def default_db_path(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if env.get(DB_ENV):
        return Path(env[DB_ENV])
    return state_dir(env) / "coord.db"

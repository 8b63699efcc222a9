"""Where the daemon keeps its board: the store argument's one rule (PROTOCOL.md section 8).

A store is a `postgresql://` or `postgres://` URI (team mode, given to libpq
exactly as written), `sqlite:PATH`, or a plain file path. Anything else that
reads as a URL (`postgresql:/db`, `postgres:db`, `mysql://h/db`, `file:x.db`,
`my:board.db`) or as a libpq key=value string (`host=... dbname=...`) is
refused: taken as a file name it would silently serve a local SQLite file
where a team store was meant (issue 43). A file whose name has a colon or
starts with `WORD=` is written `./NAME` (or `sqlite:NAME`). `--db`,
`$COORDD_DB`, `migrate --from` and `backup`'s destination are file paths and
follow the same rule, without the `sqlite:` prefix.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from coordd.dsn import CONNINFO_START, TEAM_SCHEMES, URL_SCHEME, is_team_store, redact

# Clients find the daemon of the default database through its lock file, so the
# rule is the wire contract's, written once.
from coordd_wire.paths import DB_ENV, STORE_ENV, default_db_path
from coordd_wire.record import SQLITE_PREFIX

__all__ = [
    "DB_ENV",
    "STORE_ENV",
    "TEAM_SCHEMES",
    "StoreRefused",
    "board_path",
    "default_db_path",
    "file_path",
    "is_team_store",
    "resolve_store",
]


class StoreRefused(ValueError):
    """A store or file argument that would not be what it looks like; the message says why."""


def _not_a_file(text: str) -> str | None:
    """What `text` reads as, if not as a file path: 'a URL' or 'a libpq key=value string'."""
    if URL_SCHEME.match(text):
        return "a URL"
    if CONNINFO_START.match(text):
        return "a libpq key=value connection string"
    return None


def _team_hint(text: str) -> str:
    """Said when `text` was surely meant as a team store (a PostgreSQL scheme, misspelled)."""
    scheme = text.split(":", 1)[0].lower()
    if scheme in ("postgresql", "postgres"):
        return (
            "; a team store is written postgresql:// with two slashes, as libpq reads it"
            " (postgresql:///DBNAME?host=... when the host is in the query)"
        )
    return ""


def file_path(text: str, what: str) -> Path:
    """`text` as a file path, refused if it reads as something else (see the module doc)."""
    if not text:
        raise StoreRefused(f"{what} is empty: give a file path")
    looks = _not_a_file(text)
    if looks is not None:
        raise StoreRefused(
            f"{what} {redact(text)!r} reads as {looks}, not a file path{_team_hint(text)}"
            f" (and is given with --store or ${STORE_ENV}); a file whose name has a colon"
            " or an '=' is written ./NAME"
        )
    return Path(text)


def store_location(text: str, what: str) -> tuple[Path | None, str | None]:
    """(SQLite path, DSN) for one store argument, by the module's rule."""
    if is_team_store(text):
        return None, text
    if text.startswith(SQLITE_PREFIX):
        path = text[len(SQLITE_PREFIX) :]
        if not path:
            raise StoreRefused(
                f"{what} is an empty store location: give a file path or a postgresql:// DSN"
            )
        return Path(path), None
    looks = _not_a_file(text)
    if looks is not None:
        raise StoreRefused(
            f"{what} {redact(text)!r} is {looks} but not a store coordd serves"
            f"{_team_hint(text)}; a team store is a postgresql:// (or postgres://) URI, and"
            " a file whose name has a colon or an '=' is written sqlite:NAME or ./NAME"
        )
    return Path(text), None


def board_path(db: Path | None, environ: Mapping[str, str] | None = None) -> Path:
    """The SQLite file: `--db` (checked by the parser), `$COORDD_DB`, the state directory."""
    env = os.environ if environ is None else environ
    if db is not None:
        return db
    if env.get(DB_ENV):
        return file_path(env[DB_ENV], f"${DB_ENV}")
    return default_db_path(env)


def resolve_store(
    store: str | None, db: Path | None, environ: Mapping[str, str] | None = None
) -> tuple[Path | None, str | None]:
    """(SQLite path, PostgreSQL DSN), exactly one set, from the flags and the environment.

    Precedence: `--store`, `$COORDD_STORE`, `--db`, `$COORDD_DB`, the state
    directory. `--store` with `--db` is refused by the parser first. Raises
    StoreRefused for an argument that breaks the module's rule.
    """
    env = os.environ if environ is None else environ
    if store:
        return store_location(store, "--store")
    if env.get(STORE_ENV):
        return store_location(env[STORE_ENV], f"${STORE_ENV}")
    return board_path(db, env), None

"""Where `coordd serve` keeps the board: --store, $COORDD_STORE, --db, $COORDD_DB, in that order."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from psycopg.conninfo import conninfo_to_dict

from coordd.dsn import redact
from coordd.paths import StoreRefused, board_path, file_path, resolve_store

DSN = "postgresql://coordd@db.example/team"


def test_the_precedence_is_store_then_its_variable_then_db_then_its_variable() -> None:
    env = {"COORDD_STORE": "sqlite:/from/env.db", "COORDD_DB": "/from/db-env.db"}
    assert resolve_store(DSN, Path("/flag.db"), env) == (None, DSN)
    assert resolve_store(None, Path("/flag.db"), env) == (Path("/from/env.db"), None)
    assert resolve_store(None, Path("/flag.db"), {"COORDD_DB": "/x.db"}) == (Path("/flag.db"), None)
    assert resolve_store(None, None, {"COORDD_DB": "/x.db"}) == (Path("/x.db"), None)
    assert resolve_store(None, None, {"COORDD_STORE": DSN, "COORDD_DB": "/x.db"}) == (None, DSN)


def test_a_store_is_a_dsn_an_sqlite_url_or_a_plain_path() -> None:
    assert resolve_store("postgres://u@h/d", None, {}) == (None, "postgres://u@h/d")
    assert resolve_store("sqlite:rel/board.db", None, {}) == (Path("rel/board.db"), None)
    assert resolve_store("/abs/board.db", None, {}) == (Path("/abs/board.db"), None)
    assert resolve_store("sqlite:a:b.db", None, {}) == (Path("a:b.db"), None)
    assert resolve_store("./a:b.db", None, {}) == (Path("a:b.db"), None)
    with pytest.raises(StoreRefused, match="empty store"):
        resolve_store("sqlite:", None, {})


@pytest.mark.parametrize(
    "given",
    [
        "postgresql:/coordtest?host=/run/pg",  # what urlunsplit made of postgresql:///coordtest
        "postgres:db",
        "POSTGRESQL://h/db",  # libpq's prefix test is case-sensitive
        "mysql://h/db",
        "http://x",
        "file:x.db",
        "my:board.db",
        "host=/run/pg dbname=team",  # libpq's key=value form: a team store meant, not a file
    ],
)
def test_a_store_that_reads_as_a_url_but_not_a_team_store_is_refused(given: str) -> None:
    for store, env in ((given, {}), (None, {"COORDD_STORE": given})):
        with pytest.raises(StoreRefused) as refused:
            resolve_store(store, None, env)
        message = str(refused.value)
        assert repr(given) in message and "postgresql://" in message
        assert "sqlite:NAME or ./NAME" in message


def test_a_refused_store_is_named_without_its_password() -> None:
    with pytest.raises(StoreRefused) as refused:
        resolve_store("postgresql:/team?host=/run/pg&password=s3cret", None, {})
    assert "s3cret" not in str(refused.value)
    assert "'postgresql:/team?host=/run/pg'" in str(refused.value)
    assert "two slashes" in str(refused.value)


def test_a_file_path_that_reads_as_a_url_is_refused_unless_written_as_a_path() -> None:
    for text in ("postgresql://h/db", "my:board.db", "user=me"):
        with pytest.raises(StoreRefused, match="not a file path"):
            file_path(text, "--db")
    assert file_path("./my:board.db", "--db") == Path("my:board.db")
    assert file_path("/abs/my:board.db", "--db") == Path("/abs/my:board.db")
    with pytest.raises(StoreRefused, match=r"\$COORDD_DB"):
        board_path(None, {"COORDD_DB": "postgresql:///team"})
    with pytest.raises(StoreRefused, match=r"\$COORDD_DB"):
        resolve_store(None, None, {"COORDD_DB": "postgresql:///team"})
    assert board_path(None, {"COORDD_DB": "./x:y.db"}) == Path("x:y.db")


def test_store_and_db_together_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "coordd", "serve", "--store", DSN, "--db", str(tmp_path / "a.db")],
        check=False,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2 and "--store and --db" in done.stderr


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("postgresql://alice:s3cret@db.example:5432/team?sslmode=require",
         "postgresql://alice@db.example:5432/team?sslmode=require"),
        ("postgresql://alice@db.example/team?password=s3cret&sslmode=verify-full",
         "postgresql://alice@db.example/team?sslmode=verify-full"),
    ],
)  # fmt: skip
def test_the_password_is_cut_from_what_is_shown(dsn: str, shown: str) -> None:
    assert redact(dsn) == shown


def test_a_key_value_dsn_keeps_everything_but_the_password() -> None:
    shown = redact("host=db.example user=alice password=s3cret dbname=team")
    assert conninfo_to_dict(shown) == {"host": "db.example", "user": "alice", "dbname": "team"}

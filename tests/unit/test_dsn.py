"""A DSN as shown (`coordd.dsn.redact`): the given text byte for byte, but for the password.

Each case is also read by libpq itself (psycopg's `conninfo_to_dict` is
`PQconninfoParse`): the shown DSN must mean what the given one means, less
its password, so a user who pastes it back reaches the same store.
"""

from __future__ import annotations

import pytest
from psycopg.conninfo import conninfo_to_dict

from coordd.dsn import UNPARSABLE, has_password, is_team_store, redact

#: (given, shown): every libpq URI form the issue names, and key=value strings.
CASES = [
    # The empty authority, everything in the query (the bug's own DSN).
    ("postgresql:///coordtest?host=/run/pg&port=5432&user=coordteam&password=secret",
     "postgresql:///coordtest?host=/run/pg&port=5432&user=coordteam"),
    ("postgresql:///coordtest?password=secret&host=/run/pg&port=5432",
     "postgresql:///coordtest?host=/run/pg&port=5432"),
    ("postgresql:///coordtest?host=/run/pg&password=secret&port=5432",
     "postgresql:///coordtest?host=/run/pg&port=5432"),
    ("postgresql:///coordtest?password=secret", "postgresql:///coordtest"),
    ("postgresql:///?service=team", "postgresql:///?service=team"),
    ("postgresql:///?service=team&password=x", "postgresql:///?service=team"),
    # A Unix socket directory as the host, in the query or percent-encoded in the authority.
    ("postgres://alice:s3cret@/team?host=/var/run/postgresql",
     "postgres://alice@/team?host=/var/run/postgresql"),
    ("postgresql://alice:s3cret@%2Fvar%2Frun%2Fpostgresql/team",
     "postgresql://alice@%2Fvar%2Frun%2Fpostgresql/team"),
    # The authority, with a port and other parameters kept in their order and encoding.
    ("postgresql://alice:s3cret@db.example:5432/team?sslmode=require&application_name=a%20b",
     "postgresql://alice@db.example:5432/team?sslmode=require&application_name=a%20b"),
    ("postgresql://alice@db.example/team?password=s3cret&sslmode=verify-full",
     "postgresql://alice@db.example/team?sslmode=verify-full"),
    # Percent-encoded user and password (`@ : / % ? & =` inside them), a percent-encoded key.
    ("postgresql://c%40t%3Ax:c%40t%3Ax%2Fy%25%3F%26%3D@db.example/team",
     "postgresql://c%40t%3Ax@db.example/team"),
    ("postgresql://alice@db.example/team?pass%77ord=c%40t%3Ax%2Fy%25&sslmode=disable",
     "postgresql://alice@db.example/team?sslmode=disable"),
    # A password holding a raw `?`, which libpq reads up to the first `@`.
    ("postgresql://alice:a?b@db.example/team", "postgresql://alice@db.example/team"),
    # IPv6 hosts.
    ("postgresql://alice:s3cret@[::1]:5432/team", "postgresql://alice@[::1]:5432/team"),
    ("postgresql://[::1]:5432/team?user=alice&password=s3cret",
     "postgresql://[::1]:5432/team?user=alice"),
    ("postgresql://[2001:db8::1234]/team", "postgresql://[2001:db8::1234]/team"),
    # Several hosts.
    ("postgresql://alice:s3cret@h1:5432,h2:5433/team?target_session_attrs=read-write",
     "postgresql://alice@h1:5432,h2:5433/team?target_session_attrs=read-write"),
    ("postgresql:///team?host=h1,h2&port=5432,5433&password=s3cret",
     "postgresql:///team?host=h1,h2&port=5432,5433"),
    # No password: nothing changes, whatever the form.
    ("postgresql://", "postgresql://"),
    ("postgresql://db.example", "postgresql://db.example"),
    ("postgresql://alice@db.example/team", "postgresql://alice@db.example/team"),
    ("postgresql://alice:@db.example/team", "postgresql://alice:@db.example/team"),
    ("postgresql:///team?password=", "postgresql:///team?password="),
    # key=value connection strings, with libpq's quoting.
    ("host=db.example user=alice password=s3cret dbname=team",
     "host=db.example user=alice dbname=team"),
    ("password = 'a b\\' c' host=db.example", "host=db.example"),
    ("host=db.example password=s\\ 3 dbname=team", "host=db.example dbname=team"),
    ("host=db.example  dbname='a b'", "host=db.example  dbname='a b'"),
]  # fmt: skip


@pytest.mark.parametrize(("given", "shown"), CASES)
def test_only_the_password_is_cut(given: str, shown: str) -> None:
    assert redact(given) == shown
    assert has_password(given) == (given != shown)


@pytest.mark.parametrize(("given", "shown"), CASES)
def test_libpq_reads_the_shown_dsn_as_the_given_one_without_its_password(
    given: str, shown: str
) -> None:
    meant = conninfo_to_dict(given)
    if meant.get("password") == "":
        meant.pop("password")  # an empty password is kept as written: it is none
        assert conninfo_to_dict(shown).get("password") in ("", None)
        return
    meant.pop("password", None)
    assert conninfo_to_dict(shown) == meant


def test_the_empty_authority_keeps_its_three_slashes() -> None:
    """urlunsplit wrote `postgresql:/coordtest`: not a team store any more (issue 43)."""
    shown = redact("postgresql:///coordtest?host=/run/pg&password=secret")
    assert shown.startswith("postgresql:///coordtest?") and is_team_store(shown)


def test_an_unparsable_key_value_string_is_not_shown() -> None:
    assert redact("host=x password='s3cret") == UNPARSABLE
    assert has_password("host=x password='s3cret")


def test_other_urls_lose_their_password_too() -> None:
    """For the refusals that name what was given."""
    assert redact("mysql://u:pw@h/db") == "mysql://u@h/db"
    assert redact("postgresql:/db?host=/run&password=pw") == "postgresql:/db?host=/run"


def test_the_client_key_s_passphrase_is_a_secret_too() -> None:
    """`sslpassword` unlocks the client certificate's key (the review's find: it was kept
    in argv, in records and in refusals a hook hands to the model)."""
    given = "postgresql:///db?host=/x&sslpassword=y&sslmode=require"
    assert redact(given) == "postgresql:///db?host=/x&sslmode=require"
    assert has_password(given)
    assert redact("host=/x sslpassword='a b' dbname=db") == "host=/x dbname=db"

"""A team store's DSN as text: where its password is, and the DSN shown without it.

The DSN that connects is never rewritten: libpq (through psycopg) gets the
exact string it was given. This module only reads it, to cut the password
out of what is *shown* (logs, `server.info`, the `<socket>.store` record,
which a user is told to paste back into `coordd serve --store '...'`), and
to refuse a password given on the command line. So the shown form must be
the given one byte for byte but for the password: a parse-and-rebuild
(`urlunsplit`) turned `postgresql:///db?host=...` into `postgresql:/db?...`,
which is not a team store at all (issue 43).

The password is found where libpq finds it (fe-connect.c,
`conninfo_uri_parse_options` and `conninfo_parse`), not where a generic URL
parser would: in a URI, the userinfo runs from after `://` to the *first*
`@` met before any `/`, its password after the userinfo's first `:`; in the
query (after the first `?` past the userinfo), `&`-separated `key=value`
items whose percent-decoded key is `password`. A key=value conninfo string
(`host=... password='...'`) is read with libpq's quoting rules.

Standard library only: the CLI reads this before psycopg is imported.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

#: The prefixes libpq reads as a connection URI (case-sensitive, as libpq compares them).
TEAM_SCHEMES = ("postgresql://", "postgres://")

#: Anything a URL parser would read as `scheme:...` (RFC 3986's scheme syntax).
URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")

#: What libpq reads as a key=value connection string: a keyword, then `=`.
CONNINFO_START = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_]*\s*=")

#: Shown instead of a key=value string libpq could not parse either (it may hold anything).
UNPARSABLE = "(an unparsable DSN)"

Span = tuple[int, int]


class Unparsable(ValueError):
    """A key=value string with an unterminated quote or a keyword without `=`."""


def is_team_store(location: str) -> bool:
    """A `postgresql://` or `postgres://` URI: libpq's own test for a connection URI."""
    return location.startswith(TEAM_SCHEMES)


def _uri_spans(dsn: str) -> list[Span]:
    """The spans to cut from a `scheme://...` or `scheme:...` string: its passwords.

    Each span includes its delimiter (the authority's `:`, or the query item
    with the `&` that joins it to a neighbour), so that cutting it leaves a
    well-formed DSN. Empty passwords are not passwords (libpq ignores them).
    """
    scheme = URL_SCHEME.match(dsn)
    start = scheme.end() if scheme else 0
    spans: list[Span] = []
    query_from = start
    if dsn.startswith("//", start):
        start += 2
        userinfo_end = _first_of(dsn, "@/", start)
        if userinfo_end < len(dsn) and dsn[userinfo_end] == "@":
            colon = dsn.find(":", start, userinfo_end)
            if colon != -1 and userinfo_end > colon + 1:
                spans.append((colon, userinfo_end))
            query_from = userinfo_end + 1
    question = dsn.find("?", query_from)
    if question != -1:
        spans += _query_spans(dsn, question)
    return spans


def _first_of(text: str, characters: str, start: int) -> int:
    """The index of the first of `characters` in `text` from `start`, else len(text)."""
    for i in range(start, len(text)):
        if text[i] in characters:
            return i
    return len(text)


def _query_spans(dsn: str, question: int) -> list[Span]:
    """The `password=...` items of the query that starts at `dsn[question] == '?'`.

    Each is cut with one `&` (the one before it if an item is kept before it,
    else the one after); when no item is kept, the `?` goes too.
    """
    items: list[Span] = []
    begin = question + 1
    while True:
        end = dsn.find("&", begin)
        end = len(dsn) if end == -1 else end
        items.append((begin, end))
        if end == len(dsn):
            break
        begin = end + 1
    cut = [_is_password_item(dsn[b:e]) for b, e in items]
    spans: list[Span] = []
    for i, (b, e) in enumerate(items):
        if not cut[i]:
            continue
        if not all(cut[:i]):
            spans.append((b - 1, e))
        elif not all(cut[i + 1 :]):
            spans.append((b, e + 1))
        else:
            spans.append((question if i == 0 else b - 1, e))
    return spans


#: libpq's parameters that hold a secret: the password, and the one that unlocks the
#: client certificate's key (libpq, "Parameter Key Words").
SECRET_KEYS = frozenset({"password", "sslpassword"})


def _is_password_item(item: str) -> bool:
    """`password=VALUE` (or `sslpassword=`) with a non-empty value, the key possibly
    percent-encoded."""
    key, equals, value = item.partition("=")
    return bool(equals and value) and unquote(key) in SECRET_KEYS


def _conninfo_spans(dsn: str) -> list[Span]:
    """The `password = value` pairs of a key=value string.

    A pair is cut with the blanks before it, or, when no pair is kept before
    it, with the blanks after it, so the rest reads as it was written.
    """
    spans: list[Span] = []
    i, n = 0, len(dsn)
    first = True  # no pair kept yet
    while True:
        blanks = i
        while i < n and dsn[i].isspace():
            i += 1
        if i == n:
            return spans
        key_start = i
        while i < n and dsn[i] != "=" and not dsn[i].isspace():
            i += 1
        key = dsn[key_start:i]
        while i < n and dsn[i].isspace():
            i += 1
        if i == n or dsn[i] != "=":
            raise Unparsable(f"missing '=' after {key!r}")
        i += 1
        while i < n and dsn[i].isspace():
            i += 1
        value_start = i
        i = _conninfo_value_end(dsn, i)
        if key in SECRET_KEYS and i > value_start:
            if first:
                end = i
                while end < n and dsn[end].isspace():
                    end += 1
                spans.append((key_start, end))
            else:
                spans.append((blanks, i))
        else:
            first = False


def _conninfo_value_end(dsn: str, i: int) -> int:
    """Where the value starting at `i` ends (libpq's `conninfo_parse` quoting)."""
    n = len(dsn)
    if i < n and dsn[i] == "'":
        i += 1
        while True:
            if i >= n:
                raise Unparsable("an unterminated quoted string")
            if dsn[i] == "\\":
                i += 2
                continue
            if dsn[i] == "'":
                return i + 1
            i += 1
    while i < n and not dsn[i].isspace():
        i += 2 if dsn[i] == "\\" else 1
    return min(i, n)


def password_spans(dsn: str) -> list[Span]:
    """Where `dsn`'s passwords are, as (start, end) spans in order. Raises Unparsable."""
    if URL_SCHEME.match(dsn) or not CONNINFO_START.match(dsn):
        return _uri_spans(dsn)
    return _conninfo_spans(dsn)


def has_password(dsn: str) -> bool:
    """`dsn` carries a (non-empty) password, in the authority, the query or a key=value pair."""
    try:
        return bool(password_spans(dsn))
    except Unparsable:
        return "password" in dsn  # cannot tell where it ends: assume the worst


def redact(dsn: str) -> str:
    """`dsn` without its password, every other byte as given: for logs and display only."""
    try:
        spans = password_spans(dsn)
    except Unparsable:
        return UNPARSABLE
    shown, last = [], 0
    for start, end in spans:
        shown.append(dsn[last:start])
        last = end
    shown.append(dsn[last:])
    return "".join(shown)


#: Why `coordd serve --store` and `coordd migrate --to` refuse a DSN with a password.
ARGV_PASSWORD_REFUSAL = (
    "a password on the command line is visible to every local user (ps, /proc/<pid>/cmdline)"
    " from the moment the process starts, so coordd does not take one there. Give the DSN"
    " without it and put the password in ~/.pgpass (or $PGPASSFILE), in a service file"
    " ($PGSERVICEFILE, used with ?service=NAME or $PGSERVICE), or in $PGPASSWORD; or put the"
    " whole DSN, password included, in $COORDD_STORE (a process's environment is readable by"
    " its owner alone)"
)

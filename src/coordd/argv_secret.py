"""A team store's password never stays on the command line (README, "Team mode").

`/proc/<pid>/cmdline` (what `ps` shows) is readable by every local user, while
`/proc/<pid>/environ` is the process owner's alone (proc(5)). So when
`coordd serve --store postgresql://user:secret@host/db` is given a password
on its command line, the daemon moves it to `PGPASSWORD` (which libpq reads,
as it reads `PGPASSFILE`, `~/.pgpass` and `PGSERVICE`) and re-executes itself
at once, with the same pid, on the DSN without the password. Python cannot
rewrite its own argv in place portably; an exec is what replaces what `ps`
shows. The password is visible only for the instant before that exec, so
the documented ways (the passfile, a service file, `$PGPASSWORD`) remain
the ones to use.

Standard library only: this runs before anything else, psycopg or not.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from urllib.parse import unquote, urlsplit, urlunsplit

#: libpq's environment variable for the password (libpq, "Environment Variables").
PASSWORD_ENV = "PGPASSWORD"


def split_password(dsn: str) -> tuple[str, str | None]:
    """(the DSN without its password, the password or None) for a `postgresql://` URI.

    The password may be in the authority (`user:secret@host`) or in the query
    (`?password=secret`), percent-encoded either way (libpq, "Connection URIs");
    the rest of the DSN is kept byte for byte. A password in the query wins
    over the authority's, as libpq applies query parameters last.
    """
    parts = urlsplit(dsn)
    password: str | None = None
    netloc = parts.netloc
    if "@" in netloc:
        credentials, host = netloc.rsplit("@", 1)
        if ":" in credentials:
            user, secret = credentials.split(":", 1)
            password = unquote(secret)
            netloc = f"{user}@{host}" if user else host
    kept: list[str] = []
    for item in parts.query.split("&") if parts.query else []:
        key, _, value = item.partition("=")
        if unquote(key) == "password":
            password = unquote(value)
        else:
            kept.append(item)
    if password is None:
        return dsn, None
    return urlunsplit((parts.scheme, netloc, parts.path, "&".join(kept), parts.fragment)), password


def scrubbed_command(command: Sequence[str], dsn: str, redacted: str) -> list[str] | None:
    """`command` with the DSN written without its password wherever it stands.

    The DSN is a word of its own (`--store DSN`, also abbreviated as argparse
    allows) or follows an `=` (`--store=DSN`). None when it is not found as
    such (then there is nothing to replace, and the caller refuses).
    """
    out = list(command)
    found = False
    for i, word in enumerate(out):
        if word == dsn:
            out[i] = redacted
            found = True
        elif word.startswith("--") and word.endswith(f"={dsn}"):
            out[i] = word[: -len(dsn)] + redacted
            found = True
    return out if found else None


REFUSAL = (
    "a password on the command line is visible to every local user (ps); give the DSN"
    " without it and put the password in ~/.pgpass (or $PGPASSFILE), a service file"
    " ($PGSERVICE, then --store 'postgresql:///?service=NAME'), or $PGPASSWORD"
)


def reexec_without_password(
    store: str,
    *,
    orig_argv: Sequence[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> str | None:
    """Re-execute this process with `store`'s password in `$PGPASSWORD`; never returns then.

    Returns None when `store` has no password (nothing to do), or the refusal
    to print when its password cannot be taken off the command line.
    """
    redacted, password = split_password(store)
    if password is None:
        return None
    command = scrubbed_command(sys.orig_argv if orig_argv is None else orig_argv, store, redacted)
    if command is None:
        return REFUSAL
    env = dict(os.environ if environ is None else environ)
    # A password written in the DSN takes precedence over $PGPASSWORD in libpq,
    # so it does here too.
    env[PASSWORD_ENV] = password
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, command, env)
    raise AssertionError("unreachable: execve returned")  # pragma: no cover

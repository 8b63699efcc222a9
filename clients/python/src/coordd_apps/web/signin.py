"""How `coord web --open` signs the browser in without a secret on any command line.

A browser is started with its URL as an argument, and every uid reads every
process's argv (`ps`, `/proc/<pid>/cmdline`). So `--open` never hands a browser
the token, nor any other live secret. It writes a small HTML page that redirects
to `/?code=<one-time code>`, in a file only this user can read (mode 0600, in
`$XDG_RUNTIME_DIR` when there is one, else the temporary directory, under a
random name), and opens `file:///that/path`: the argv names a path, which is
no secret.

The code inside is a second wall, for what the file leaves behind (a copy, the
browser's history): it is spent on first use and dies after `CODE_LIFETIME_S`,
and the file is removed as soon as it is spent or dead. A second use, or a late
one, is refused with the way to sign in: the address `coord web` printed on its
own terminal, which only the user sees.

Why not a one-time code on the browser's command line: it is live from the
moment the browser starts until its first request, and another uid watching
`/proc` for new processes can read it and spend it first (then it holds the
session, and the user's browser is the one refused). A path has no such race.
"""

from __future__ import annotations

import hmac
import html
import os
import secrets
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import trio

#: Seconds a one-time code lives: a browser that starts cold on a loaded machine
#: takes a few; a minute is ample, and short enough that a leftover is worthless.
CODE_LIFETIME_S = 60.0

Clock = Callable[[], float]


@dataclass
class OneTimeCode:
    """One code: its value (256 random bits), when it dies (on the `Codes` clock), and
    an event set when it is spent (its file may go then)."""

    expires: float
    value: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    used: trio.Event = field(default_factory=trio.Event)

    @property
    def spent(self) -> bool:
        return self.used.is_set()


class Codes:
    """The codes this server has issued; `spend` is the only way one is used."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self.clock = clock
        self._issued: list[OneTimeCode] = []

    def issue(self, lifetime_s: float = CODE_LIFETIME_S) -> OneTimeCode:
        code = OneTimeCode(expires=self.clock() + lifetime_s)
        self._issued.append(code)
        return code

    def spend(self, given: str) -> bool:
        """Whether `given` is a live code, which it no longer is after this call.

        No `await` in here: under trio nothing runs between the check and the
        mark, so two requests with one code cannot both win."""
        now = self.clock()
        for code in self._issued:
            if hmac.compare_digest(code.value.encode(), given.encode()):
                live = not code.spent and now < code.expires
                code.used.set()
                return live
        return False

    def left_s(self, code: OneTimeCode) -> float:
        """Seconds until `code` dies (0 once dead)."""
        return max(0.0, code.expires - self.clock())


def runtime_dir() -> str | None:
    """`$XDG_RUNTIME_DIR` when it is a directory of this user's that only they can
    enter, else None (the temporary directory; the file's own mode protects it)."""
    where = os.environ.get("XDG_RUNTIME_DIR")
    if not where:
        return None
    try:
        found = os.stat(where)
    except OSError:
        return None
    if found.st_uid != os.geteuid() or found.st_mode & 0o077:
        return None
    return where


def redirect_page(target: str) -> str:
    """A page that goes to `target` at once (no script needed; a link if refresh is off)."""
    quoted = html.escape(target, quote=True)
    return (
        "<!doctype html>\n<html><head><meta charset=utf-8>"
        f'<meta http-equiv="refresh" content="0; url={quoted}">'
        "<title>coord web</title></head>\n"
        f'<body><a href="{quoted}">Open coord web</a></body></html>\n'
    )


def write_redirect(target: str) -> Path:
    """The redirect to `target` in a new file only this user can read (0600, created
    exclusively under a random name, so no one can plant or swap it)."""
    fd, name = tempfile.mkstemp(prefix="coord-web-", suffix=".html", dir=runtime_dir())
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, redirect_page(target).encode())
    finally:
        os.close(fd)
    return Path(name)

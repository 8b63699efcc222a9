"""Who may use the page: the checks every request meets before any route runs.

Loopback TCP is open to every user of the machine, unlike the daemon's socket
(0600, peer uid checked), so `coord web` asks for a secret and trusts nothing a
browser sends on its own (docs/SECURITY.md, "coord web"):

- **Host** must name this server on loopback (`127.0.0.1`, `localhost`,
  `[::1]`, with our port): a page of another site that rebinds its DNS name to
  127.0.0.1 reaches the port with its own name in `Host`, and is refused.
- **The token** `coord web` prints (256 random bits, in the URL's query) is
  exchanged for a cookie, `HttpOnly` (no script reads it) and `SameSite=Strict`
  (no other site's page sends it); the answer redirects to the same path
  without the token, so it does not stay in the address bar. So is a one-time
  **code** (`?code=`, `signin.py`: what `--open` hands the browser, through a
  0600 file), once, within its lifetime, answered with a page that goes on to
  the path (a `SameSite=Strict` cookie is not sent along redirects of a
  navigation a `file:` page started); a spent or dead one is refused with the
  way to sign in. The redirect goes to a path on this server only
  (`same_origin_path`): never `//host/`, `/\\host` or an absolute URL.
  A request with neither a right token nor the cookie is refused, 403.
- **A POST** must carry an `Origin` that is this server (browsers send it on
  every POST), and the form's CSRF field (`acts.py` checks it): a form on
  another site fails both, whatever the browser does with the cookie.
- **Every answer** carries a Content-Security-Policy that allows only this
  server's own script and style (no inline script, so an escaped title that
  slipped through could not run either), no framing, and no caching.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

from coordd_apps.web.signin import CODE_LIFETIME_S, Codes, redirect_page

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

COOKIE = "coord_web"
#: The names a loopback server is reached by; anything else in `Host` is refused.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
#: The static files are the page's own code, not data: served without the cookie.
PUBLIC_PREFIX = "/static/"
#: What a spent, dead or unknown one-time code is answered (it names no secret).
CODE_REFUSED = (
    "This sign-in link has been used already or has expired: `coord web --open` makes"
    f" one that works once, within {CODE_LIFETIME_S:.0f} seconds.\n"
    "Sign in with the address `coord web` printed on the terminal that started it"
    " (http://127.0.0.1:<port>/?token=...)."
)

HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        b"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    # Not `no-referrer`: under it Chromium sends `Origin: null` on a form's POST, and the
    # Origin check needs the real one. Other sites are sent no referrer either way.
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]


@dataclass(frozen=True)
class Secrets:
    """The printed token and what is derived from it: the cookie's value and the CSRF
    field's, each an HMAC of the token, so neither reveals it."""

    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))

    def _derive(self, purpose: str) -> str:
        return hmac.new(self.token.encode(), purpose.encode(), hashlib.sha256).hexdigest()

    @property
    def session(self) -> str:
        return self._derive("session")

    @property
    def csrf(self) -> str:
        return self._derive("csrf")

    def csrf_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given, self.csrf)


def same_origin_path(path: str) -> str:
    """`path` as a Location that can only mean a path on this server, else `/`.

    A browser reads `//host/` as another host, and `/\\host` too (a backslash is a
    slash in an http URL), and drops tabs and newlines before reading
    (`/<tab>/host`); a request in absolute form (`GET http://host/`) has a path that
    is a whole URL. Each of those would make the sign-in an open redirect."""
    if (
        not path.startswith("/")
        or path.startswith("//")
        or "\\" in path
        or any(ord(c) < 0x20 or ord(c) == 0x7F for c in path)
    ):
        return "/"
    return quote(path, safe="/:@!$&'()*+,;=")


def _query(scope: Scope) -> list[tuple[str, str]]:
    return parse_qsl(bytes(scope.get("query_string", b"")).decode("latin-1"))


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


class Guard:
    """ASGI middleware in front of the whole app: Host, token or cookie, Origin."""

    def __init__(self, app: App, keys: Secrets, codes: Codes | None = None) -> None:
        self.app = app
        self.keys = keys
        #: The one-time codes `--open` hands a browser (`signin.py`).
        self.codes = codes or Codes()
        #: Empty until `listening` names the port: until then every request is refused.
        self.hosts: frozenset[str] = frozenset()
        self.origins: frozenset[str] = frozenset()

    def listening(self, port: int) -> None:
        """The port is bound: the names (and origins) this server answers to."""
        self.hosts = frozenset(f"{name}:{port}" for name in LOOPBACK_NAMES)
        self.origins = frozenset(f"http://{host}" for host in self.hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is not None:
            status, text = refusal
            await _plain(send, status, text)
            return
        if self._token_in_query(scope):
            await self._exchange(scope, send)
            return
        code = self._code_in_query(scope)
        if code is not None:
            if self.codes.spend(code):
                await self._exchange(scope, send, bounce=True)
            else:
                await _plain(send, 403, CODE_REFUSED)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """Why this request is refused (status, text), or None to let it through."""
        host = _header(scope, b"host")
        if host not in self.hosts:
            return 421, "coord web answers only to its loopback address (Host refused)"
        if scope["method"] not in ("GET", "HEAD", "POST"):
            return 405, "method not allowed"
        if scope["method"] == "POST":
            origin = _header(scope, b"origin")
            if origin not in self.origins:
                return 403, "cross-site request refused (Origin is not this page)"
            site = _header(scope, b"sec-fetch-site")
            if site not in (None, "same-origin"):
                return 403, "cross-site request refused (Sec-Fetch-Site)"
        if scope["path"].startswith(PUBLIC_PREFIX) or self._token_in_query(scope):
            return None
        if self._code_in_query(scope) is not None:
            return None  # spent or refused by `__call__`, never passed to a route
        if not self._cookie_ok(scope):
            return 403, "open the address coord web printed: its token is missing or wrong"
        return None

    def _token_in_query(self, scope: Scope) -> bool:
        for key, value in _query(scope):
            if key == "token":
                return hmac.compare_digest(value.encode(), self.keys.token.encode())
        return False

    @staticmethod
    def _code_in_query(scope: Scope) -> str | None:
        """The `code` of a GET (only a GET spends one: not a HEAD, not a form)."""
        if scope["method"] != "GET":
            return None
        return next((value for key, value in _query(scope) if key == "code"), None)

    def _cookie_ok(self, scope: Scope) -> bool:
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(_header(scope, b"cookie") or "")
        except Exception:
            return False
        morsel = jar.get(COOKIE)
        return morsel is not None and hmac.compare_digest(morsel.value, self.keys.session)

    async def _exchange(self, scope: Scope, send: Send, bounce: bool = False) -> None:
        """The token (or a code) for the cookie, and the same path without it.

        A `bounce` answers a page that goes there itself, not a redirect: a code
        comes from `--open`'s file, and a browser does not send a `SameSite=Strict`
        cookie anywhere along a navigation a `file:` page started, redirects
        included; a navigation this server's own page starts is same-site."""
        query = [(k, v) for k, v in _query(scope) if k not in ("token", "code")]
        location = same_origin_path(scope["path"]) + (f"?{urlencode(query)}" if query else "")
        cookie = f"{COOKIE}={self.keys.session}; HttpOnly; SameSite=Strict; Path=/"
        headers = [(b"set-cookie", cookie.encode()), *HEADERS]
        if bounce:
            headers.append((b"content-type", b"text/html; charset=utf-8"))
            body = redirect_page(location).encode()
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        headers.append((b"location", location.encode()))
        await send({"type": "http.response.start", "status": 303, "headers": headers})
        await send({"type": "http.response.body", "body": b""})


async def _plain(send: Send, status: int, text: str) -> None:
    body = (text + "\n").encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), *HEADERS]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})

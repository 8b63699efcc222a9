"""One HTTP POST on trio, for webhooks: h11 over a trio stream, so the caller's cancel
scope bounds the whole exchange (urllib's timeout is per read: a receiver that trickles
its answer a byte at a time held a thread, and every later notification, forever).

Redirects are never followed: the status is the answer, and a 3xx is the caller's to
judge (a webhook counts it as a failure: following it would carry the signed headers,
as a body-less GET, to wherever the receiver pointed).
"""

from __future__ import annotations

import ssl
from urllib.parse import urlsplit

import h11
import trio

#: Bytes read from the receiver at a time.
READ_BYTES = 65536


class PostFailed(Exception):
    """No status came back: no connection, a broken one, or an answer that is not HTTP."""


async def post(url: str, body: bytes, headers: list[tuple[str, str]]) -> int:
    """POST `body` to `url` (http:// or https://) and give back the answer's status.

    Only the status line and headers are read; the connection is closed after them
    (`Connection: close`), so no answer body can keep the caller waiting. Every way
    the exchange can break is one `PostFailed`, so a bad receiver cannot crash the
    caller with an error it did not expect."""
    try:
        return await _post(url, body, headers)
    except (OSError, ValueError, h11.ProtocolError, trio.BrokenResourceError) as exc:
        raise PostFailed(str(exc) or type(exc).__name__) from exc


async def _post(url: str, body: bytes, headers: list[tuple[str, str]]) -> int:
    parts = urlsplit(url)
    host = parts.hostname or ""
    https = parts.scheme == "https"
    port = parts.port or (443 if https else 80)
    stream: trio.abc.Stream
    if https:
        context = ssl.create_default_context()
        stream = await trio.open_ssl_over_tcp_stream(host, port, ssl_context=context)
    else:
        stream = await trio.open_tcp_stream(host, port)
    async with stream:
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return await _exchange(stream, parts.netloc.rpartition("@")[2], target, body, headers)


async def _exchange(
    stream: trio.abc.Stream, host: str, target: str, body: bytes, headers: list[tuple[str, str]]
) -> int:
    connection = h11.Connection(h11.CLIENT)
    request = h11.Request(
        method="POST",
        target=target,
        headers=[
            ("Host", host),
            ("Content-Length", str(len(body))),
            ("Connection", "close"),
            *headers,
        ],
    )
    await stream.send_all(
        b"".join(
            connection.send(part) or b""
            for part in (request, h11.Data(data=body), h11.EndOfMessage())
        )
    )
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            connection.receive_data(bytes(await stream.receive_some(READ_BYTES)))
        elif isinstance(event, h11.Response):
            return int(event.status_code)
        elif isinstance(event, h11.ConnectionClosed):
            raise PostFailed("the receiver closed the connection without an answer")
        # An InformationalResponse (1xx) is passed over: the answer follows it.

"""Newline-delimited JSON-RPC, read with a bound: the MCP stdio transport's framing.

The MCP specification's stdio transport is one JSON-RPC message per line.
A reader that buffers until a newline lets one endless line take all the
memory there is, so this splitter keeps at most `MAX_LINE_BYTES` of a line:
a longer one is reported once (`OVERLONG`) and the rest of it, up to its
newline, is dropped as it arrives, never held. Sans-IO (fed bytes, returns
lines), so the relay, the shared server and the in-process server all read
the same way, and the unit tests need no pipes.
"""

from __future__ import annotations

#: The longest line kept, in bytes (4 MiB): far above any MCP message coord sends
#: or expects (a tool call's arguments are bounded by the daemon's 1 MiB frame).
MAX_LINE_BYTES = 4 * 1024 * 1024

#: A line longer than `MAX_LINE_BYTES` (what `LineSplitter.feed` yields in its place).
OVERLONG = None

#: JSON-RPC 2.0's codes (section 5.1): not JSON at all; JSON but not a request.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def error_line(code: int, message: str) -> bytes:
    """A JSON-RPC error answer with id null (the id of a line that could not be read),
    as one line. `message` must need no JSON escaping (every caller's is a constant)."""
    return b'{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":"%s"}}\n' % (
        code,
        message.encode(),
    )


#: The answer to a line over the bound: the line is gone, so its id is unknown.
OVERLONG_ANSWER = error_line(
    INVALID_REQUEST,
    f"Invalid Request: a line longer than {MAX_LINE_BYTES} bytes (4 MiB) was discarded;"
    " send one JSON-RPC message per line",
)


class LineSplitter:
    """Bytes in, complete lines out (without their newline); `OVERLONG` for a line over
    the bound, once, as soon as it passes it."""

    def __init__(self, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self._max = max_line_bytes
        self._partial = bytearray()
        #: Inside a line already reported overlong: drop everything up to its newline.
        self._dropping = False

    def feed(self, data: bytes) -> list[bytes | None]:
        """The lines `data` completes. Blank lines are skipped (hosts send none, and
        JSON-RPC has nothing to say about them)."""
        out: list[bytes | None] = []
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            if end < 0:
                self._keep(data[start:], out)
                break
            self._keep(data[start:end], out)
            if not self._dropping and self._partial.strip():
                out.append(bytes(self._partial))
            self._partial.clear()
            self._dropping = False
            start = end + 1
        return out

    def end(self) -> list[bytes | None]:
        """The last line, if the input ended without a newline."""
        line, dropping = bytes(self._partial), self._dropping
        self._partial.clear()
        self._dropping = False
        return [line] if line.strip() and not dropping else []

    def _keep(self, piece: bytes, out: list[bytes | None]) -> None:
        if self._dropping:
            return
        if len(self._partial) + len(piece) > self._max:
            self._partial.clear()
            self._dropping = True
            out.append(OVERLONG)
            return
        self._partial += piece

"""Sans-IO framing for the coordd wire protocol (PROTOCOL.md section 2).

Every message is a 4-byte big-endian length followed by that many bytes of
UTF-8 JSON. This module only turns bytes into frames and back; it never
touches a socket, so the daemon, the clients and the fuzz tests share it.
"""

from __future__ import annotations

import struct

HEADER = struct.Struct(">I")
HEADER_SIZE = HEADER.size

#: Default maximum payload in bytes (PROTOCOL.md section 2; `--max-frame`).
DEFAULT_MAX_FRAME = 1024 * 1024
#: Largest answer a client accepts, in bytes: a daemon may be started with a
#: larger `--max-frame`, and `task.list` answers run to about 64 MiB
#: (1,000 tasks with 64 KiB bodies).
MAX_ANSWER_FRAME = 64 * 1024 * 1024


class FrameError(Exception):
    """The byte stream broke the framing rules; the connection must close."""


class EmptyFrame(FrameError):
    """A frame declared length 0, which the protocol forbids."""


class FrameTooLarge(FrameError):
    """A frame declared a payload larger than the configured maximum."""

    def __init__(self, length: int, limit: int) -> None:
        super().__init__(f"frame of {length} bytes exceeds the limit of {limit} bytes")
        self.length = length
        self.limit = limit


def encode_frame(payload: bytes) -> bytes:
    """Prefix `payload` with its length."""
    return HEADER.pack(len(payload)) + payload


class FrameDecoder:
    """Accumulates received bytes and yields complete payloads.

    Oversized and empty frames are reported as soon as their header arrives,
    without waiting for (or buffering) the payload, so a hostile length can
    never make the decoder allocate it.
    """

    __slots__ = ("_buffer", "_expected", "max_frame")

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        self.max_frame = max_frame
        self._buffer = bytearray()
        self._expected: int | None = None

    def feed(self, data: bytes) -> None:
        """Append bytes read from the stream."""
        self._buffer += data

    @property
    def in_partial_frame(self) -> bool:
        """True when some bytes of a frame have arrived but not all of it."""
        return bool(self._buffer) or self._expected is not None

    def next_frame(self) -> bytes | None:
        """Return the next complete payload, or None if more bytes are needed.

        Raises:
            EmptyFrame: a frame declared length 0.
            FrameTooLarge: a frame declared more than `max_frame` bytes.
        """
        if self._expected is None:
            if len(self._buffer) < HEADER_SIZE:
                return None
            (length,) = HEADER.unpack_from(self._buffer)
            if length == 0:
                raise EmptyFrame("frame length 0 is invalid")
            if length > self.max_frame:
                raise FrameTooLarge(length, self.max_frame)
            del self._buffer[:HEADER_SIZE]
            self._expected = length
        if len(self._buffer) < self._expected:
            return None
        payload = bytes(self._buffer[: self._expected])
        del self._buffer[: self._expected]
        self._expected = None
        return payload

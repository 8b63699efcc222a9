"""Request building and response matching, shared by the blocking and trio clients (sans-IO)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any, TypeVar

import msgspec

from coordd_wire.errors import ProtocolError, error_from_wire
from coordd_wire.framing import encode_frame

T = TypeVar("T")


class Response(msgspec.Struct):
    """Any frame from the daemon: a response (has `id`) or a notification (has `method`)."""

    jsonrpc: str = "2.0"
    id: int | str | None = None
    result: msgspec.Raw = msgspec.Raw()
    error: dict[str, Any] | None = None
    method: str | None = None
    params: msgspec.Raw = msgspec.Raw()


_response_decoder = msgspec.json.Decoder(Response)
_encoder = msgspec.json.Encoder()


class RequestBuilder:
    """Numbers requests and frames them; drops `None` params (same as omitting them)."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)

    def build(self, method: str, params: Mapping[str, Any] | None) -> tuple[int, bytes]:
        request_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        cleaned = {k: v for k, v in (params or {}).items() if v is not None}
        if cleaned:
            message["params"] = cleaned
        return request_id, encode_frame(_encoder.encode(message))


def decode_frame(payload: bytes) -> Response:
    try:
        return _response_decoder.decode(payload)
    except msgspec.DecodeError as exc:
        raise ProtocolError(f"daemon sent an undecodable frame: {exc}") from None


def unwrap(response: Response, result_type: type[T]) -> T:
    """The typed result, or the exception its error describes."""
    if response.error is not None:
        raise error_from_wire(response.error)
    try:
        return msgspec.json.decode(response.result, type=result_type)
    except msgspec.DecodeError as exc:
        raise ProtocolError(f"unexpected result shape: {exc}") from None

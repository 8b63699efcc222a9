"""Sans-IO JSON-RPC 2.0: payload bytes in, requests or error responses out.

Pure functions, no I/O and no trio, so they are unit-tested and fuzzed
without sockets (PROTOCOL.md section 3; https://www.jsonrpc.org/specification).
The envelope is decoded with `params` kept as `msgspec.Raw`; each method
decodes its own parameters later with its own Struct.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import msgspec

from coordd.limits import Limits
from coordd_wire.errors import (
    CoordError,
    InvalidParams,
    InvalidRequest,
    ParseError,
)

RequestId = int | str


class Envelope(msgspec.Struct, forbid_unknown_fields=True):
    """A request object as it arrives; `params` stays undecoded."""

    jsonrpc: str
    method: str
    id: RequestId | msgspec.UnsetType = msgspec.UNSET
    # msgspec cannot put Raw in a union: an empty Raw means "omitted".
    params: msgspec.Raw = msgspec.Raw()


@dataclass(frozen=True, slots=True)
class Request:
    """A well-formed request; `id` is None for a notification."""

    id: RequestId | None
    method: str
    params: msgspec.Raw | None

    @property
    def is_notification(self) -> bool:
        return self.id is None


@dataclass(frozen=True, slots=True)
class Rejected:
    """An item that is not a valid request: answered with `error` under `id`."""

    id: RequestId | None
    error: CoordError


Item = Request | Rejected


@dataclass(frozen=True, slots=True)
class Message:
    """One decoded frame: a single item, or a batch of items."""

    items: list[Item]
    is_batch: bool


_envelope_decoder = msgspec.json.Decoder(Envelope)
_batch_decoder = msgspec.json.Decoder(list[msgspec.Raw])
_any_decoder = msgspec.json.Decoder()


def parse_message(payload: bytes) -> Message:
    """Decode one frame's payload into requests and rejections.

    Never raises: every failure becomes a `Rejected` item carrying the right
    JSON-RPC error, with `id` null where the id cannot be known.
    """
    stripped = payload.lstrip()
    if stripped[:1] == b"[":
        return _parse_batch(payload)
    return Message([_parse_item(payload)], is_batch=False)


def _parse_batch(payload: bytes) -> Message:
    try:
        raws = _batch_decoder.decode(payload)
    except msgspec.DecodeError:
        return Message([Rejected(None, ParseError("payload is not valid JSON"))], False)
    except RecursionError:
        return Message([Rejected(None, InvalidRequest("JSON is nested too deeply"))], False)
    if not raws:
        return Message([Rejected(None, InvalidRequest("empty batch"))], False)
    if len(raws) > Limits.max_batch_items:
        error = InvalidRequest(f"batch of {len(raws)} requests exceeds {Limits.max_batch_items}")
        return Message([Rejected(None, error)], False)
    return Message([_parse_item(bytes(raw)) for raw in raws], is_batch=True)


def _parse_item(payload: bytes | memoryview) -> Item:
    try:
        envelope = _envelope_decoder.decode(payload)
    except msgspec.ValidationError as exc:
        return _reject_envelope(payload, str(exc))
    except msgspec.DecodeError:
        return Rejected(None, ParseError("payload is not valid JSON"))
    except RecursionError:
        return Rejected(None, InvalidRequest("JSON is nested too deeply"))
    request_id = None if envelope.id is msgspec.UNSET else envelope.id
    if envelope.jsonrpc != "2.0":
        return Rejected(request_id, InvalidRequest('"jsonrpc" must be exactly "2.0"'))
    raw = envelope.params
    # Omitted and `null` params both mean "no parameters".
    params = raw if raw and bytes(raw) != b"null" else None
    return Request(request_id, envelope.method, params)


def _reject_envelope(payload: bytes | memoryview, reason: str) -> Rejected:
    """Tell "not JSON" (-32700) from "JSON but not a request" (-32600)."""
    try:
        value = _any_decoder.decode(payload)
    except msgspec.DecodeError:
        return Rejected(None, ParseError("payload is not valid JSON"))
    except RecursionError:
        return Rejected(None, InvalidRequest("JSON is nested too deeply"))
    request_id: RequestId | None = None
    if isinstance(value, dict):
        candidate = value.get("id")
        if isinstance(candidate, str) or (
            isinstance(candidate, int) and not isinstance(candidate, bool)
        ):
            request_id = candidate
        message = f"not a JSON-RPC 2.0 request object: {reason}"
    else:
        message = "not a JSON-RPC 2.0 request object: expected a JSON object"
    return Rejected(request_id, InvalidRequest(message))


P = TypeVar("P")

_FIELD_AT = re.compile(r"at `\$\.([^`\[]+)")
_FIELD_NAMED = re.compile(r"field `([^`]+)`")


def decode_params(raw: msgspec.Raw | None, decoder: msgspec.json.Decoder[P]) -> P:
    """Decode by-name params with a method's own decoder.

    Raises:
        InvalidParams: naming the offending field in `data.field` where known.
    """
    source: Any = b"{}" if raw is None else raw
    try:
        return decoder.decode(source)
    except msgspec.ValidationError as exc:
        _refuse_bad_utf8(source)
        text = str(exc)
        if text.startswith("Expected `object`, got") and "$." not in text:
            raise InvalidParams(
                "params must be an object (by-name); positional params are not supported"
            ) from None
        match = _FIELD_AT.search(text) or _FIELD_NAMED.search(text)
        field = match.group(1) if match else None
        data = {"field": field} if field else {}
        raise InvalidParams(f"invalid params: {text}", **data) from None
    except (msgspec.DecodeError, RecursionError):
        _refuse_bad_utf8(source)
        raise InvalidParams("params could not be decoded") from None


def _refuse_bad_utf8(source: Any) -> None:
    """Bytes that are not UTF-8 are not JSON at all (RFC 8259 section 8.1): -32700.

    The envelope keeps params undecoded, so this is only found when they
    fail to decode; checked on that error path alone, it costs a valid
    request nothing.
    """
    try:
        bytes(source).decode("utf-8")
    except UnicodeDecodeError:
        raise ParseError("params are not valid UTF-8, so not JSON") from None


class _Result(msgspec.Struct, kw_only=True):
    jsonrpc: str = "2.0"
    id: RequestId | None
    result: Any


class _ErrorBody(msgspec.Struct, kw_only=True):
    code: int
    message: str
    data: dict[str, Any]


class _Error(msgspec.Struct, kw_only=True):
    jsonrpc: str = "2.0"
    id: RequestId | None
    error: _ErrorBody


class _Notification(msgspec.Struct, kw_only=True):
    jsonrpc: str = "2.0"
    method: str
    params: Any


#: One response object, to be encoded alone or inside a batch array.
Response = _Result | _Error

_encoder = msgspec.json.Encoder()


def result_object(request_id: RequestId | None, result: Any) -> _Result:
    """A success response, to be encoded later inside a batch array."""
    return _Result(id=request_id, result=result)


def error_object(request_id: RequestId | None, error: CoordError) -> _Error:
    """An error response, to be encoded later inside a batch array."""
    body = _ErrorBody(code=error.code, message=error.message, data=error.data)
    return _Error(id=request_id, error=body)


def encode_response(response: Response) -> bytes:
    """One response object's payload."""
    return _encoder.encode(response)


def encode_batch(responses: Sequence[Response]) -> bytes:
    """A batch answer: the array of its responses."""
    return _encoder.encode(responses)


def encode_notification(method: str, params: Any) -> bytes:
    """A server-to-client notification (subscription events)."""
    return _encoder.encode(_Notification(method=method, params=params))

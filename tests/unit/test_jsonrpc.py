from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordd.limits import Limits
from coordd.methods import METHODS
from coordd.protocol.jsonrpc import (
    Rejected,
    Request,
    decode_params,
    parse_message,
)
from coordd_wire import params as P
from coordd_wire.errors import InvalidParams


def only(payload: bytes) -> Request | Rejected:
    message = parse_message(payload)
    assert not message.is_batch and len(message.items) == 1
    return message.items[0]


def test_request_with_params() -> None:
    item = only(b'{"jsonrpc":"2.0","id":"a","method":"task.get","params":{"id":3}}')
    assert isinstance(item, Request) and item.id == "a" and item.method == "task.get"
    assert not item.is_notification
    assert decode_params(item.params, msgspec.json.Decoder(P.GetParams)).id == 3


def test_notification_has_no_id() -> None:
    item = only(b'{"jsonrpc":"2.0","method":"ping"}')
    assert isinstance(item, Request) and item.is_notification


def test_null_params_equal_omitted() -> None:
    item = only(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":null}')
    assert isinstance(item, Request) and item.params is None


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        (b"{not json", -32700),
        (b"\xff\xfe", -32700),
        (b'"just a string"', -32600),
        (b"42", -32600),
        (b'{"jsonrpc":"1.0","id":1,"method":"ping"}', -32600),
        (b'{"jsonrpc":"2.0","id":1}', -32600),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600),
        (b'{"jsonrpc":"2.0","id":1,"method":7}', -32600),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","extra":1}', -32600),
        (b"[]", -32600),
    ],
)
def test_bad_messages_are_rejected_with_the_right_code(payload: bytes, code: int) -> None:
    item = only(payload)
    assert isinstance(item, Rejected)
    assert item.error.code == code


def test_invalid_request_echoes_a_readable_id() -> None:
    item = only(b'{"jsonrpc":"1.0","id":9,"method":"ping"}')
    assert isinstance(item, Rejected) and item.id == 9
    item = only(b'{"id":[1],"method":"ping"}')
    assert isinstance(item, Rejected) and item.id is None


def test_batch_items_are_parsed_independently() -> None:
    message = parse_message(
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"}, 5, {"jsonrpc":"2.0","method":"x"}]'
    )
    assert message.is_batch
    first, second, third = message.items
    assert isinstance(first, Request) and first.id == 1
    assert isinstance(second, Rejected) and second.error.code == -32600
    assert isinstance(third, Request) and third.is_notification


def test_oversized_batch_is_refused_whole() -> None:
    batch = json.dumps(
        [{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(Limits.max_batch_items + 1)]
    )
    message = parse_message(batch.encode())
    assert not message.is_batch
    assert isinstance(message.items[0], Rejected) and message.items[0].error.code == -32600


@pytest.mark.parametrize(
    ("params", "field"),
    [
        (b'{"title":"x","bogus":1}', "bogus"),
        (b"{}", "title"),
        (b'{"title":""}', "title"),
        (b'{"title":"x","priority":1001}', "priority"),
        (b'{"title":"x","kind":"Bad Kind"}', "kind"),
        (b'{"title":"x","tags":["a",""]}', "tags"),
        (b'{"title":"x","agent":" padded"}', "agent"),
        (b'{"title":"x","state":"claimed"}', "state"),
        (b'{"title":"x","priority":"high"}', "priority"),
    ],
)
def test_invalid_params_name_the_field(params: bytes, field: str) -> None:
    with pytest.raises(InvalidParams) as info:
        decode_params(msgspec.Raw(params), msgspec.json.Decoder(P.PostParams))
    assert info.value.code == -32602
    assert info.value.data["field"] == field


def test_positional_params_are_invalid_params() -> None:
    with pytest.raises(InvalidParams) as info:
        decode_params(msgspec.Raw(b"[1, 2]"), msgspec.json.Decoder(P.GetParams))
    assert "by-name" in info.value.message


def test_null_optional_param_is_the_same_as_omitted() -> None:
    decoded = decode_params(
        msgspec.Raw(b'{"title":"x","kind":null}'), msgspec.json.Decoder(P.PostParams)
    )
    assert decoded.kind is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300)
@given(st.binary(max_size=400))
def test_random_bytes_never_escape_as_exceptions(blob: bytes) -> None:
    for item in parse_message(blob).items:
        assert isinstance(item, Request | Rejected)


@settings(max_examples=300)
@given(json_values)
def test_odd_but_valid_json_yields_requests_or_protocol_errors(value: object) -> None:
    payload = json.dumps(value).encode()
    for item in parse_message(payload).items:
        if isinstance(item, Rejected):
            assert item.error.code in (-32700, -32600)


@settings(max_examples=300)
@given(st.sampled_from(sorted(METHODS)), json_values)
def test_params_decoding_only_raises_invalid_params(method: str, value: object) -> None:
    raw = msgspec.Raw(json.dumps(value).encode())
    try:
        decode_params(raw, METHODS[method].decoder)
    except InvalidParams:
        pass


def test_deep_nesting_and_huge_numbers_are_protocol_errors() -> None:
    deep = (
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":' + b"[" * 50_000 + b"]" * 50_000 + b"}"
    )
    (rejected,) = parse_message(deep).items
    assert isinstance(rejected, Rejected) and rejected.error.code == -32600
    huge = b'{"jsonrpc":"2.0","id":1,"method":"task.get","params":{"id":' + b"9" * 400 + b"}}"
    request = only(huge)
    assert isinstance(request, Request)
    with pytest.raises(InvalidParams) as info:
        decode_params(request.params, METHODS["task.get"].decoder)
    assert info.value.data["field"] == "id"

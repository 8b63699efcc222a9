from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coordd_wire.framing import (
    EmptyFrame,
    FrameDecoder,
    FrameError,
    FrameTooLarge,
    encode_frame,
)


def test_frames_split_across_feeds_are_reassembled() -> None:
    decoder = FrameDecoder()
    wire = encode_frame(b'{"a":1}') + encode_frame(b"[2]")
    for byte in wire:
        decoder.feed(bytes([byte]))
    assert decoder.next_frame() == b'{"a":1}'
    assert decoder.next_frame() == b"[2]"
    assert decoder.next_frame() is None
    assert not decoder.in_partial_frame


def test_partial_frame_is_reported_until_complete() -> None:
    decoder = FrameDecoder()
    decoder.feed(encode_frame(b"hello")[:6])
    assert decoder.next_frame() is None
    assert decoder.in_partial_frame
    decoder.feed(b"llo")
    assert decoder.next_frame() == b"hello"


def test_oversized_frame_is_refused_from_its_header_alone() -> None:
    decoder = FrameDecoder(max_frame=10)
    decoder.feed(struct.pack(">I", 11))
    with pytest.raises(FrameTooLarge) as info:
        decoder.next_frame()
    assert info.value.length == 11 and info.value.limit == 10


def test_frame_of_exactly_the_limit_is_accepted() -> None:
    decoder = FrameDecoder(max_frame=10)
    decoder.feed(encode_frame(b"x" * 10))
    assert decoder.next_frame() == b"x" * 10


def test_zero_length_frame_is_invalid() -> None:
    decoder = FrameDecoder()
    decoder.feed(struct.pack(">I", 0))
    with pytest.raises(EmptyFrame):
        decoder.next_frame()


@given(st.lists(st.binary(min_size=1, max_size=300), max_size=20), st.data())
def test_any_chunking_of_valid_frames_roundtrips(
    payloads: list[bytes], data: st.DataObject
) -> None:
    wire = b"".join(encode_frame(p) for p in payloads)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(wire)), max_size=10)))
    decoder = FrameDecoder()
    out = []
    previous = 0
    for cut in [*cuts, len(wire)]:
        decoder.feed(wire[previous:cut])
        previous = cut
        while (frame := decoder.next_frame()) is not None:
            out.append(frame)
    assert out == payloads


@given(st.binary(max_size=2000))
def test_random_bytes_only_produce_frames_or_frame_errors(blob: bytes) -> None:
    decoder = FrameDecoder(max_frame=512)
    decoder.feed(blob)
    try:
        while (frame := decoder.next_frame()) is not None:
            assert 1 <= len(frame) <= 512
    except FrameError:
        pass

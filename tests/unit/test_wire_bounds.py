"""The declared bounds are PROTOCOL.md's numbers, and the daemon's params enforce them.

`coordd_wire.bounds` is the one place a range is typed; this pins it to the
contract's text (sections 4, 6, 9 and 10), so a typo there cannot silently move every
surface at once, and checks each end of a few ranges against the real params Structs.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from coordd_wire import bounds, params
from coordd_wire.bounds import Bound
from coordd_wire.wire import EVENT_TYPES, STATES

#: What PROTOCOL.md states, quoted where it says it.
PROTOCOL = {
    "AGENT": (1, 128),  # "agent: 1..128 printable characters"
    "PROJECT": (1, 256),  # "project: 1..256 characters"
    "TITLE": (1, 300),  # "title: 1..300 characters"
    "TEXT": (None, 65536),  # "body: 0..65536 characters"; result "(0..65536 chars)"
    "PRIORITY": (-1000, 1000),  # "integer -1000..1000"
    "TAG": (1, 64),  # "at most 16 strings of 1..64 characters each"
    "TAGS": (None, 16),
    "LEASE_S": (1, 86400),  # "lease_s: number of seconds, 1..86400"
    "TIMEOUT_S": (0, 3600),  # "timeout_s (0..3600)"
    "IDEMPOTENCY_KEY": (1, 128),  # "idempotency_key? (1..128 chars)"
    "LIST_LIMIT": (1, 1000),  # "limit? (100, max 1000)"
    "EVENTS_LIMIT": (1, 10000),  # "limit? (1000, max 10000)"
    "DEPENDS_ON": (None, 32),  # "depends_on: 0..32 ids"
    "PATTERN": (1, 1024),  # "A pattern is 1..1024 characters"
    "PATTERNS": (1, 64),  # "patterns (1..64; duplicates ignored)"
    "TTL_S": (1, 86400),  # "ttl_s? (1..86400, default 3600)"
    "WAIT_S": (0, 600),  # "wait_s? (0..600, default 0)"
    "REASON": (None, 1024),  # "reason? (0..1024 chars, default null)"
    "CHECK_PATHS": (1, 256),  # "paths (1..256)"
}


def ends(bound: Bound) -> tuple[Any, Any]:
    if bound.numeric:
        return bound.ge, bound.le
    return bound.min_length, bound.max_length


@pytest.mark.parametrize("name", sorted(PROTOCOL))
def test_each_bound_is_the_protocols_number(name: str) -> None:
    assert ends(getattr(bounds, name)) == PROTOCOL[name]


def test_the_kind_pattern_is_the_protocols() -> None:
    assert bounds.KIND.python_pattern() == r"\A[a-z][a-z0-9_-]{0,31}\Z"
    assert bounds.KIND.schema_pattern() == r"^[a-z][a-z0-9_-]{0,31}$"


def test_a_bound_limits_a_number_or_a_size_not_both() -> None:
    with pytest.raises(ValueError, match="not both"):
        Bound(ge=0, max_length=3)


def decode(struct: type[Any], **fields: Any) -> Any:
    return msgspec.json.decode(msgspec.json.encode(fields), type=struct)


@pytest.mark.parametrize("struct", [params.EventsSinceParams, params.SubscribeParams])
def test_every_event_type_may_be_asked_for_at_once(struct: type[Any]) -> None:
    # The cap was 8, the 1.0 count: a 1.1 client naming all 11 types was refused.
    assert decode(struct, types=list(EVENT_TYPES)).types == list(EVENT_TYPES)


def test_a_state_list_is_at_most_as_long_as_the_list_of_states() -> None:
    assert decode(params.ListParams, state=list(STATES)).state == list(STATES)
    with pytest.raises(msgspec.ValidationError, match="length <= 5"):
        decode(params.ListParams, state=[*STATES, "done"])


@pytest.mark.parametrize(
    ("struct", "field", "good", "bad"),
    [
        (params.ListParams, "tag", "x" * 64, "x" * 65),
        (params.ListParams, "limit", 1000, 1001),
        (params.PostParams, "priority", -1000, -1001),
        (params.AcquireParams, "wait_s", 600, 600.5),
        (params.ReleaseReservationsParams, "ids", [1] * 256, [1] * 257),
    ],
)
def test_the_daemon_refuses_one_past_each_end(
    struct: type[Any], field: str, good: Any, bad: Any
) -> None:
    required: dict[type[Any], dict[str, Any]] = {
        params.PostParams: {"title": "t"},
        params.AcquireParams: {"agent": "a", "project": "p", "patterns": ["x"]},
        params.ReleaseReservationsParams: {"agent": "a", "project": "p"},
    }
    base = required.get(struct, {})
    assert getattr(decode(struct, **base, **{field: good}), field) == good
    with pytest.raises(msgspec.ValidationError, match=rf"\$\.{field}"):
        decode(struct, **base, **{field: bad})

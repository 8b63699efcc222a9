"""Timestamps are stored as fixed-width RFC 3339 text that sorts like time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coordd.clock import format_time, parse_time, time_left


def test_format_is_fixed_width_utc_with_microseconds() -> None:
    moment = datetime(2026, 11, 30, 4, 26, 5, 123456, tzinfo=UTC)
    assert format_time(moment) == "2026-11-30T04:26:05.123456Z"
    assert format_time(moment.replace(microsecond=0)) == "2026-11-30T04:26:05.000000Z"
    other_zone = moment.astimezone(timezone(timedelta(hours=-7)))
    assert format_time(other_zone) == "2026-11-30T04:26:05.123456Z"


@given(
    st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
    ),
    st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
    ),
)
def test_text_order_is_time_order_and_round_trips(a: datetime, b: datetime) -> None:
    assert len(format_time(a)) == 27
    assert (format_time(a) < format_time(b)) == (a < b)
    assert parse_time(format_time(a)) == a


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(-5, "in 0 s"), (0.2, "in 1 s"), (89, "in 89 s"), (90, "in 2 min"), (599.5, "in 10 min"),
     (7199, "in 120 min"), (7200, "in 2.0 h"), (86400, "in 24.0 h")],
)  # fmt: skip
def test_time_left_is_said_in_the_unit_a_reader_wants(seconds: float, said: str) -> None:
    now = datetime(2026, 12, 2, 6, 0, tzinfo=UTC)
    later = now + timedelta(seconds=seconds)
    assert time_left(format_time(later), format_time(now)) == said


def test_time_left_of_an_instant_in_another_form_is_unsaid() -> None:
    assert time_left("2026-12-02T06:00:00Z", "2026-12-02T05:00:00.000000Z") == ""

"""Timestamps are stored as fixed-width RFC 3339 text that sorts like time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from coordd.clock import format_time, parse_time


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

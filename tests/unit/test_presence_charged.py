"""Who `coord top`'s Agents pane shows (issue 48 review): a tab whose claim was
released (its budget spent) holds nothing and names no task, but the ledger charged
it in this project; it was hidden while its tokens were on the board's COST."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from coordd_client import presence
from coordd_wire.wire import AgentInfo


def test_an_agent_the_ledger_charged_here_is_involved() -> None:
    now = datetime(2026, 12, 6, 8, 30, tzinfo=UTC)
    seen = (now - timedelta(minutes=8)).isoformat(timespec="microseconds")[:-6] + "Z"
    tab = AgentInfo(agent="claude-bbbbbbbb1111", last_seen=seen, holding=0)
    without = presence.involved([], [])
    assert presence.scoped([tab], now, holders=(), involved=without) == []
    charged = presence.involved([], [], {"claude-bbbbbbbb1111": 110_100})
    assert presence.scoped([tab], now, holders=(), involved=charged) == [tab]

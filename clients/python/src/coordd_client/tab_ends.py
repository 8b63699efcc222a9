"""Telling the board that tabs whose host process is gone have ended.

A tab's session-end hook reports its own end (`agent.end`); a tab that crashed,
or was killed, ran no hook, and the board would show it as present until its
name aged out. Whoever next finds its record in the tab registry with its host
process gone (`tabs.ended`: a new tab's session start, `coord agents`) reports
it here, then prunes the record, so that it is reported once.
"""

from __future__ import annotations

from collections.abc import Sequence

from coordd_client import tabs
from coordd_client.client import Client
from coordd_wire.errors import MethodNotFound

#: At most this many ended tabs are reported at once (a hook's time is short).
MAX_REPORTED = 16


def report_ended(client: Client, agent: str, gone: Sequence[tabs.Tab]) -> list[str]:
    """Report each of `gone`'s agents ended, as `agent`; a tab that worked on another
    board (its record names it) is left to that board. Returns the names reported."""
    if not gone:
        return []
    board = client.server_info().board_id
    reported: list[str] = []
    for tab in gone[:MAX_REPORTED]:
        if tab.board is not None and board is not None and tab.board != board:
            continue
        try:
            client.end_agent(tab.agent, agent=agent)
        except MethodNotFound:  # a daemon without `agent_ended`
            return reported
        reported.append(tab.agent)
    return reported

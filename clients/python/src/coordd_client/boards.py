"""Which board a surface reached, and whether it is the one its tab works on.

Every store has an id (docs/PROTOCOL-1.2.md section 1b, `server.info.board_id`).
A tab's first session-start records the board it reached in the tab registry
(`tabs.bind_board`); from then on each surface of that tab (its hooks, its
MCP server, `coord` in its shell) checks that the daemon it reached serves
that board, and refuses in the host's own words when it does not: a surface
whose host gave it another environment may have found, or started, another
daemon, and work done there would be invisible to every other tab (two
winners of one claim, a slot granted twice, messages nobody reads).
"""

from __future__ import annotations

from coordd_client import tabs
from coordd_client.client import Client
from coordd_wire.errors import WrongBoard


def mismatch(tab: tabs.Tab | None, reached: str | None, socket: object) -> WrongBoard | None:
    """The refusal when `reached` (a daemon's board id) is not `tab`'s board; None when
    it is, or when either is unknown (a daemon from before section 1b, no tab)."""
    if tab is None or tab.board is None or reached is None or reached == tab.board:
        return None
    record = tabs.record_path(tab)
    rebind = (
        f"; if board {reached} is the one you mean now (you moved the board on purpose),"
        f" end this tab and start a new one, or remove {record}"
        if record is not None
        else ""
    )
    return WrongBoard(
        f"this tab ({tab.agent}) works on board {tab.board}, but the daemon on {socket}"
        f" serves board {reached}: another daemon, started or found in another environment."
        " Nothing was done there. Run `coord doctor` in a terminal to see which daemon serves"
        f" which board and the one command that ends the split{rebind}",
        expected=tab.board,
        reached=reached,
        socket=str(socket),
    )


def check(client: Client, *, process: int | None = None) -> None:
    """Raise `WrongBoard` if `client`'s daemon serves another board than the tab of this
    process (or of `process`) works on. One `server.info` round trip, and only for a
    surface whose tab has a board recorded; nothing for any other caller."""
    tab = tabs.find(of=process)
    if tab is None or tab.board is None:
        return
    refusal = mismatch(tab, client.server_info().board_id, client.socket_path)
    if refusal is not None:
        raise refusal

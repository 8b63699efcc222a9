"""How `coord top` fits the terminal: which board columns, how wide, and how tall the
feed is. Pure functions of the terminal's size, no Textual, so the rule is tested (and
read) on its own; docs/WATCHING.md's `coord top` section states the same rule per width.

Width: ID, STATE and TITLE are always shown. TITLE takes whatever is left, and
never less than `title_floor(width)` (26 columns, or a third of the width when
that is more), so a title is the last thing to shrink. The other columns join in priority
order while they fit beside that floor (WHO first, cut to 12 characters with an
ellipsis; then LEASE, AGE, COST, PRI, BLOCKED BY, KIND); room left over widens WHO to its
full 20, then the title. Whatever a narrow board leaves out is in the detail view;
without COST, a budget's mark leads the title instead (`board.Board._title`).

Height: the feed of events is a pane under the board, a quarter of the height
(6 to 16 lines); below `FEED_AUTO_ROWS` rows it starts hidden (the board needs the
lines) and `e` toggles it. The counts line is under the feed, always: one line, or
two when it does not fit the width (the counts, then the filter and the edits), so no
count is ever cut off.

The side panes (Reservations, Messages, Agents) have fixed columns too, from
`pane_columns`: each column starts at its least, one column (the pattern, the
message, what an agent holds) takes what is left, never less than its floor, and room
beyond that floor widens the others to their full width, in order. A cut cell ends in
an ellipsis rather than scrolling the pane sideways.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    name: str
    width: int
    #: Narrowest it may be cut to (cells end in an ellipsis); `width` when it never is.
    least: int


#: Shown at every width.
ID = Column("ID", 5, 5)
STATE = Column("STATE", 9, 9)  # "cancelled"
#: The rest, in the order they join as the terminal widens (and leave as it narrows).
OPTIONAL = (
    Column("WHO", 20, 12),
    Column("LEASE", 6, 6),  # "lapsed", "12:34"
    Column("AGE", 4, 4),
    Column("COST", 11, 11),  # tokens so far (issue 48): "1.2M", "510k/500k!!"
    Column("PRI", 3, 3),
    Column("BLOCKED BY", 10, 10),
    Column("KIND", 8, 8),  # "question"
)
#: Board order, left to right, of whatever is shown.
ORDER = ("ID", "STATE", "PRI", "KIND", "WHO", "LEASE", "BLOCKED BY", "AGE", "COST", "TITLE")
TITLE_LEAST = 26
#: DataTable pads each cell by one on both sides.
PADDING = 2
#: The vertical scrollbar's columns, kept free so a long board never scrolls sideways.
SCROLLBAR = 2
FEED_AUTO_ROWS = 30
FEED_LEAST, FEED_MOST = 6, 16


def title_floor(width: int) -> int:
    return max(TITLE_LEAST, width // 3)


def columns(width: int) -> list[tuple[str, int]]:
    """The board's columns at a terminal `width`: (name, width) in board order."""
    room = width - SCROLLBAR - (ID.width + PADDING) - (STATE.width + PADDING)
    room -= title_floor(width) + PADDING
    chosen: dict[str, int] = {}
    for column in OPTIONAL:
        if column.least + PADDING > room:
            break  # strictly in priority order: a narrower board is a prefix of a wider one
        chosen[column.name] = column.least
        room -= column.least + PADDING
    if "WHO" in chosen:
        grow = min(room, OPTIONAL[0].width - chosen["WHO"])
        chosen["WHO"] += grow
        room -= grow
    chosen["ID"], chosen["STATE"] = ID.width, STATE.width
    chosen["TITLE"] = title_floor(width) + max(0, room)
    return [(name, chosen[name]) for name in ORDER if name in chosen]


def feed_lines(height: int, shown: bool | None) -> int:
    """The feed's height at a terminal `height`; `shown` is the human's choice (`e`),
    None until they make one. 0: hidden."""
    if shown is None:
        shown = height >= FEED_AUTO_ROWS
    return min(FEED_MOST, max(FEED_LEAST, height // 4)) if shown else 0


#: The Reservations pane (slot and port leases share it, `tui/slots.py`); PATTERN
#: takes the rest. EXPIRES is `in 57 min (14:57Z)`, cut to `in 57 min…` when tight.
RESERVATION_COLUMNS = (
    Column("ID", 4, 4),  # "L123"
    Column("PATTERN", 0, 20),
    Column("HOLDER", 20, 12),
    Column("MODE", 9, 9),  # "exclusive", "slot of 4"
    Column("EXPIRES", 18, 10),
    Column("TASK", 5, 5),
)
#: The Messages pane (`tui/messages.COLUMNS`); MESSAGE, the body, takes the rest.
MESSAGE_COLUMNS = (
    Column("ID", 4, 4),
    Column("FROM", 20, 12),
    Column("KIND", 16, 10),  # "release src/auth/**"
    Column("STATE", 8, 8),  # "answered"
    Column("TASK", 5, 5),
    Column("MESSAGE", 0, 27),
)
#: The Agents pane; HOLDS, the task ids an agent holds, takes the rest.
AGENT_COLUMNS = (
    Column("AGENT", 20, 12),
    Column("SEEN", 17, 10),  # "14 min ago (stale)"
    Column("HOLDS", 0, 12),
    Column("RESERVED", 8, 8),
    Column("COST", 6, 6),  # tokens charged to the agent's calls so far (issue 48)
)


def pane_columns(width: int, wanted: Sequence[Column], rest: str) -> list[tuple[str, int]]:
    """A side pane's columns at a terminal `width`, (name, width) in `wanted`'s order.

    Each column starts at its least; `rest` takes the room left, never less than its
    `least` (a floor); room beyond the floor widens the others, in order, up to their
    `width`, and whatever is still left goes to `rest`."""
    room = width - SCROLLBAR - sum(c.least + PADDING for c in wanted)
    chosen = {c.name: c.least for c in wanted}
    for column in wanted:
        if column.name == rest or room <= 0:
            continue
        grow = min(room, column.width - column.least)
        chosen[column.name] += grow
        room -= grow
    chosen[rest] += max(0, room)
    return [(c.name, chosen[c.name]) for c in wanted]

"""How `coord top` fits the terminal: which board columns, how wide, and how tall the
feed is. Pure functions of the terminal's size, no Textual, so the rule is tested (and
read) on its own; docs/WATCHING.md's `coord top` section states the same rule per width.

Width: ID, STATE and TITLE are always shown. TITLE takes whatever is left, and
never less than `title_floor(width)` (26 columns, or a third of the width when
that is more), so a title is the last thing to shrink. The other columns join in priority
order while they fit beside that floor (WHO first, cut to 12 characters with an
ellipsis; then LEASE, AGE, PRI, BLOCKED BY, KIND); room left over widens WHO to its
full 20, then the title. Whatever a narrow board leaves out is in the detail view.

Height: the feed of events is a pane under the board, a quarter of the height
(6 to 16 lines); below `FEED_AUTO_ROWS` rows it starts hidden (the board needs the
lines) and `e` toggles it. The counts line is one line under the feed, always.
"""

from __future__ import annotations

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
    Column("PRI", 3, 3),
    Column("BLOCKED BY", 10, 10),
    Column("KIND", 8, 8),  # "question"
)
#: Board order, left to right, of whatever is shown.
ORDER = ("ID", "STATE", "PRI", "KIND", "WHO", "LEASE", "BLOCKED BY", "AGE", "TITLE")
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

"""Result types of docs/PROTOCOL-1.2.md section 15 (issue 48): the token ledger.

Token counts only: they are facts the host reported. Dollars are an estimate each
client makes from a price table (`coordd_apps.prices`), never the daemon's.
"""

from __future__ import annotations

from typing import ClassVar

import msgspec

from coordd_wire.wire import BudgetCrossing


class Tokens(msgspec.Struct, frozen=True, kw_only=True):
    #: Every answer has all four (the defaults only build a Struct): never absent.
    ALWAYS_SENT: ClassVar[frozenset[str]] = frozenset(
        {"input", "output", "cache_creation", "cache_read"}
    )
    input: int = 0
    output: int = 0
    cache_creation: int = 0
    cache_read: int = 0

    @property
    def total(self) -> int:
        return self.input + self.output + self.cache_creation + self.cache_read


class Charge(Tokens, frozen=True, kw_only=True):
    """What one report charged one task (None: unattributed, its agent held none)."""

    task_id: int | None


class UsageReportResult(msgspec.Struct, frozen=True, kw_only=True):
    #: Entries new to the ledger, and those it had already (counted once).
    recorded: int
    duplicates: int
    charges: list[Charge]
    #: The `usage.reported` event's seq; None when nothing was new (no event).
    seq: int | None = None
    #: Budgets this report carried past 80% or 100% (feature `token_budgets`): what the
    #: reporting hook tells its tab's model.
    budgets: list[BudgetCrossing] = []


class CostRow(Tokens, frozen=True, kw_only=True):
    """The tokens charged to one task by one agent's calls to one model."""

    task_id: int | None
    agent: str
    model: str
    #: Model calls charged here (an entry split across n tasks counts in each).
    entries: int


class Budget(msgspec.Struct, frozen=True, kw_only=True):
    """A task's token budget and what has been charged to it (whatever the filters)."""

    task_id: int
    tokens: int
    spent: int


class CostResult(msgspec.Struct, frozen=True, kw_only=True):
    rows: list[CostRow]
    #: The sums over every row matched, `limit` or not.
    totals: Tokens
    #: More rows matched than `limit`.
    more: bool = False
    #: The budgets of the tasks in `rows` that have one (feature `token_budgets`).
    budgets: list[Budget] = []

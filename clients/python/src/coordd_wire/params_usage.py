"""Parameter Structs of docs/PROTOCOL-1.2.md section 15 (issue 48): the token ledger.

A hook reports what its host's transcript says a model call spent (`usage.report`);
anyone asks what a task, an agent or a model cost (`cost.query`). Apart from
`params.py` so the feature adds a module, not lines to one file; every bound comes
from `coordd_wire.bounds`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import msgspec

from coordd_wire import bounds
from coordd_wire.params import Agent, Params, Project, TaskId, meta

UsageId = Annotated[str, meta(bounds.USAGE_ID)]
Host = Annotated[str, meta(bounds.USAGE_HOST)]
SessionId = Annotated[str, meta(bounds.USAGE_SESSION)]
Model = Annotated[str, meta(bounds.USAGE_MODEL)]
Instant = Annotated[str, meta(bounds.USAGE_AT)]
Tokens = Annotated[int, meta(bounds.USAGE_TOKENS)]
CostLimit = Annotated[int, meta(bounds.COST_LIMIT)]

DEFAULT_COST_LIMIT = 1000


def check_instant(text: str, field: str, *, nested: bool = False) -> None:
    """A pattern cannot refuse month 13 or 25:00; `datetime` can. In an entry msgspec
    appends the entry's path (`- at $.entries[3]`) itself."""
    try:
        moment = datetime.fromisoformat(text)
        if moment.tzinfo is not None:
            moment.astimezone(UTC)  # as the store writes it: overflows before year 1
    except (ValueError, OverflowError):  # month 13; year 1 an hour east of UTC
        where = "" if nested else f" - at `$.{field}`"
        raise ValueError(f"`{field}` is not a valid instant: {text!r}{where}") from None


class UsageEntry(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One model call as the host counted it: the facts a ledger keeps."""

    #: Stable across re-reads and retries: the dedup key is (host, id).
    id: UsageId
    at: Instant
    model: Model
    input: Tokens = 0
    output: Tokens = 0
    cache_creation: Tokens = 0
    cache_read: Tokens = 0

    def __post_init__(self) -> None:
        check_instant(self.at, "at", nested=True)


UsageEntries = Annotated[list[UsageEntry], meta(bounds.USAGE_ENTRIES)]


class UsageReportParams(Params):
    agent: Agent
    project: Project
    host: Host
    entries: UsageEntries
    session: SessionId | None = None
    #: Whom a message tells when this report takes a task to 100% of its budget: the
    #: person the reporting tab works for (`human-<user>`: the name is the client's
    #: rule, the daemon knows no people). Feature `budget_notify`.
    notify: Agent | None = None


class CostQueryParams(Params):
    """Every filter is optional; with none, the whole ledger (to `limit` rows)."""

    project: Project | None = None
    task_id: TaskId | None = None
    agent: Agent | None = None
    model: Model | None = None
    since: Instant | None = None
    until: Instant | None = None
    limit: CostLimit | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        for field in ("since", "until"):
            value = getattr(self, field)
            if value is not None:
                check_instant(value, field)


__all__ = ["CostQueryParams", "UsageEntry", "UsageReportParams"]

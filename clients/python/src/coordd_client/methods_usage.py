"""The builders of docs/PROTOCOL-1.2.md section 15 (issue 48): the token ledger.

Written like `methods.py`'s, loaded by the clients at first use
(`methods.later_module`), so a hook that reports nothing never imports them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from coordd_client.methods import _to
from coordd_wire import wire_usage as W
from coordd_wire.method_table import Call, call


def report_usage(
    host: str,
    entries: Sequence[Mapping[str, Any]],
    *,
    agent: str | None = None,
    project: str | None = None,
    session: str | None = None,
    notify: str | None = None,
) -> Call[W.UsageReportResult]:
    """Add model calls to the ledger: each `{"id", "at", "model", "input", "output",
    "cache_creation", "cache_read"}`; an `id` the ledger has for `host` counts once.
    `notify`: who is messaged when the report spends a task's whole budget (feature
    `budget_notify`; "human" is this user's name). Feature `token_ledger`."""
    params = {
        "host": host,
        "entries": [dict(entry) for entry in entries],
        "agent": agent,
        "project": project,
        "session": session,
        "notify": _to(notify),
    }
    return call("usage.report", params)


def cost(
    *,
    project: str | None = None,
    task_id: int | None = None,
    agent: str | None = None,
    model: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int | None = None,
) -> Call[W.CostResult]:
    """Tokens charged, per (task, agent, model), and their totals; every filter optional.
    `agent` is a filter here, never filled by a client's default agent."""
    params = {
        "project": project,
        "task_id": task_id,
        "agent": agent,
        "model": model,
        "since": since,
        "until": until,
        "limit": limit,
    }
    # Nones dropped: a param absent is one no client default fills (`with_defaults`).
    return call("cost.query", {k: v for k, v in params.items() if v is not None})

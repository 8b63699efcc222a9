"""`file.*` methods (docs/PROTOCOL-1.2.md section 11, issue 33): recorded edits and reads,
and the pre-edit verdict.

The three writes run in the writer like every other write; `file.recent` on a
reader. A guard that reserved something may have ended nothing, so it wakes
no waiter; a recorded edit appends `file.edited`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coordd.clock import format_time
from coordd.methods.registry import Services, Session, method
from coordd.protocol import params_edits as E
from coordd.store import edits


def _write(name: str, params_type: type[Any], fn: Callable[..., Any]) -> None:
    """A write queued straight to the writer (no trio task), as `task.*` writes are: the
    pre-edit and post-edit hooks call these on every edit."""

    async def handler(services: Services, p: Any, session: Session) -> Any:
        return await services.writer.submit(fn, p)

    method(name, params_type, fn)(handler)


for _name, _params, _fn in (
    ("file.guard", E.GuardParams, edits.guard),
    ("file.record_edit", E.RecordEditParams, edits.record_edit),
    ("file.record_read", E.RecordReadParams, edits.record_read),
):
    _write(_name, _params, _fn)


@method("file.recent", E.RecentParams)
async def recent(services: Services, p: E.RecentParams, session: Session) -> Any:
    now = format_time(services.clock.now())
    return await services.readers.run(edits.recent, now, p, share=session.reads)

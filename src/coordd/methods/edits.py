"""`file.*` methods (docs/PROTOCOL-1.2.md section 11, issue 33): recorded edits and reads,
and the pre-edit verdict.

The three writes run in the writer like every other write; `file.recent` on a
reader. `file.guard` first matches on a reader, then decides in the writer. A
guard that reserved something may have ended nothing, so it wakes
no waiter; a recorded edit appends `file.edited`.
"""

from __future__ import annotations

from typing import Any

from coordd.clock import format_time
from coordd.methods.registry import Services, Session, method, write
from coordd.store import edits
from coordd_wire import params_edits as E


@method("file.guard")
async def guard(services: Services, p: E.GuardParams, session: Session) -> Any:
    """Matched on a reader first, then decided in the writer with those answers: the
    writer matches only what changed in between, so a guard over many paths and many
    live reservations never holds every other write behind it (issue 44)."""
    now = format_time(services.clock.now())
    async with services.matching(len(p.paths)):
        verdicts = await services.readers.run(edits.match_for_guard, now, p, share=session.reads)
    return await services.writer.submit(edits.guard, p, verdicts)


for _name, _fn in (
    ("file.record_edit", edits.record_edit),
    ("file.record_read", edits.record_read),
):
    write(_name, _fn)


@method("file.recent")
async def recent(services: Services, p: E.RecentParams, session: Session) -> Any:
    now = format_time(services.clock.now())
    return await services.readers.run(edits.recent, now, p, share=session.reads)

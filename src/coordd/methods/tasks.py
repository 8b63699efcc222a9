"""`task.*` methods except `task.wait` (which lives with the events).

Each is a thin adapter: decode the params, run one function from
`store` (claims, holding, writes) in the writer, or from `store.reads` on a reader.
"""

from __future__ import annotations

from typing import Any

from coordd.methods.registry import Services, Session, method, write
from coordd.store import claims, holding, reads, writes
from coordd_wire import params as P

for _name, _fn in (
    ("task.post", writes.post_task),
    ("task.claim", claims.claim_task),
    ("task.claim_next", claims.claim_next),
    ("task.renew", holding.renew_task),
    ("task.release", holding.release_task),
    ("task.complete", holding.complete_task),
    ("task.fail", holding.fail_task),
    ("task.cancel", writes.cancel_task),
    ("task.reopen", writes.reopen_task),
    ("task.assign", writes.assign_task),
):
    write(_name, _fn)


@method("task.get")
async def get(services: Services, p: P.GetParams, session: Session) -> Any:
    return await services.readers.point_read(reads.read_task, p.id)


@method("task.list")
async def list_(services: Services, p: P.ListParams, session: Session) -> Any:
    return await services.readers.run(reads.list_tasks, p, share=session.reads)

"""`task.*` methods except `task.wait` (which lives with the events).

Each is a thin adapter: decode the params, run one function from
`store` (claims, holding, writes) in the writer, or from `store.reads` on a reader.
"""

from __future__ import annotations

from typing import Any

from coordd.methods.registry import Services, Session, method, write
from coordd.store import claims, holding, reads, writes
from coordd_client.protocol import params as P

for _name, _params, _fn in (
    ("task.post", P.PostParams, writes.post_task),
    ("task.claim", P.ClaimParams, claims.claim_task),
    ("task.claim_next", P.ClaimNextParams, claims.claim_next),
    ("task.renew", P.RenewParams, holding.renew_task),
    ("task.release", P.ReleaseParams, holding.release_task),
    ("task.complete", P.CompleteParams, holding.complete_task),
    ("task.fail", P.FailParams, holding.fail_task),
    ("task.cancel", P.CancelParams, writes.cancel_task),
    ("task.reopen", P.ReopenParams, writes.reopen_task),
    ("task.assign", P.AssignParams, writes.assign_task),
):
    write(_name, _params, _fn)


@method("task.get", P.GetParams)
async def get(services: Services, p: P.GetParams, session: Session) -> Any:
    return await services.readers.point_read(reads.read_task, p.id)


@method("task.list", P.ListParams, large_answer=True)
async def list_(services: Services, p: P.ListParams, session: Session) -> Any:
    return await services.readers.run(reads.list_tasks, p, share=session.reads)

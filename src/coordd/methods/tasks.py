"""`task.*` methods except `task.wait` (which lives with the events)."""

from __future__ import annotations

from typing import Any

from coordd.methods.registry import Services, Session, method
from coordd.protocol import params as P
from coordd.store import queries


@method("task.post", P.PostParams, writes=True)
async def post(services: Services, p: P.PostParams, session: Session) -> Any:
    return await services.writer.submit(queries.post_task, p)


@method("task.get", P.GetParams)
async def get(services: Services, p: P.GetParams, session: Session) -> Any:
    return await services.readers.run(queries.read_task, p.id)


@method("task.list", P.ListParams)
async def list_(services: Services, p: P.ListParams, session: Session) -> Any:
    return await services.readers.run(queries.list_tasks, p)


@method("task.claim", P.ClaimParams, writes=True)
async def claim(services: Services, p: P.ClaimParams, session: Session) -> Any:
    return await services.writer.submit(queries.claim_task, p)


@method("task.claim_next", P.ClaimNextParams, writes=True)
async def claim_next(services: Services, p: P.ClaimNextParams, session: Session) -> Any:
    return await services.writer.submit(queries.claim_next, p)


@method("task.renew", P.RenewParams, writes=True)
async def renew(services: Services, p: P.RenewParams, session: Session) -> Any:
    return await services.writer.submit(queries.renew_task, p)


@method("task.release", P.ReleaseParams, writes=True)
async def release(services: Services, p: P.ReleaseParams, session: Session) -> Any:
    return await services.writer.submit(queries.release_task, p)


@method("task.complete", P.CompleteParams, writes=True)
async def complete(services: Services, p: P.CompleteParams, session: Session) -> Any:
    return await services.writer.submit(queries.complete_task, p)


@method("task.fail", P.FailParams, writes=True)
async def fail(services: Services, p: P.FailParams, session: Session) -> Any:
    return await services.writer.submit(queries.fail_task, p)


@method("task.cancel", P.CancelParams, writes=True)
async def cancel(services: Services, p: P.CancelParams, session: Session) -> Any:
    return await services.writer.submit(queries.cancel_task, p)


@method("task.reopen", P.ReopenParams, writes=True)
async def reopen(services: Services, p: P.ReopenParams, session: Session) -> Any:
    return await services.writer.submit(queries.reopen_task, p)

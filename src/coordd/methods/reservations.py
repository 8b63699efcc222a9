"""`reservation.*` methods (PROTOCOL.md section 10).

Acquire and release run in the writer; check and list on a reader. An
acquire with `wait_s` waits in the `ReservationQueue`, which the writer's
committed results wake: every task transition's event, and the projects whose
reservations a write ended with no event (`Txn.freed_projects`).
"""

from __future__ import annotations

from typing import Any

from coordd.clock import format_time
from coordd.methods.registry import Services, Session, method, write
from coordd.store import reservations
from coordd_wire import params as P


@method("reservation.acquire")
async def acquire(services: Services, p: P.AcquireParams, session: Session) -> Any:
    async def attempt() -> Any:
        return await services.writer.submit(reservations.acquire, p)

    if not p.wait_s:
        return await attempt()

    async def task_still_held() -> None:
        assert p.task_id is not None
        now = format_time(services.clock.now())
        await services.readers.run(
            reservations.require_task_held, now, p.task_id, p.agent, share=session.reads
        )

    return await services.reservation_queue.acquire(
        p, attempt, task_still_held if p.task_id is not None else None
    )


write("reservation.release", reservations.release)


@method("reservation.check")
async def check(services: Services, p: P.CheckParams, session: Session) -> Any:
    now = format_time(services.clock.now())
    async with services.matching(len(p.paths)):
        return await services.readers.run(reservations.check, now, p, share=session.reads)


@method("reservation.list")
async def list_(services: Services, p: P.ListReservationsParams, session: Session) -> Any:
    now = format_time(services.clock.now())
    return await services.readers.run(reservations.list_live, now, p, share=session.reads)

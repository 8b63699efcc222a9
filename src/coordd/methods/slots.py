"""`slot.*`, `port.lease` and `land.*` (docs/PROTOCOL-1.2.md sections 13 and 14).

Writes run in the writer; lists on a reader. An acquire or a landing start
with `wait_s` waits in the `SlotQueue`, which committed events wake.
"""

from __future__ import annotations

from typing import Any

from coordd.clock import format_time
from coordd.methods.registry import Services, Session, method, write
from coordd.store import landing, slots
from coordd_wire import params_slots as S


@method("slot.acquire")
async def acquire(services: Services, p: S.SlotAcquireParams, session: Session) -> Any:
    async def attempt() -> Any:
        return await services.writer.submit(slots.acquire, p)

    if not p.wait_s:
        return await attempt()
    return await services.slot_queue.wait((p.project, p.name), p.wait_s, attempt, fifo=True)


write("slot.release", slots.release)


@method("slot.list")
async def list_(services: Services, p: S.SlotListParams, session: Session) -> Any:
    now = format_time(services.clock.now())
    return await services.readers.run(slots.list_live, now, p, share=session.reads)


write("port.lease", slots.lease_port)
write("land.enqueue", landing.enqueue)


@method("land.start")
async def start(services: Services, p: S.LandStartParams, session: Session) -> Any:
    async def attempt() -> Any:
        return await services.writer.submit(landing.start, p)

    if not p.wait_s:
        return await attempt()
    key = (p.project, f"{S.LANDING_SLOT_PREFIX}#{p.id}")
    return await services.slot_queue.wait(key, p.wait_s, attempt, fifo=False)


write("land.finish", landing.finish)


@method("land.list")
async def list_landings(services: Services, p: S.LandListParams, session: Session) -> Any:
    now = format_time(services.clock.now())
    return await services.readers.run(landing.list_open, now, p, share=session.reads)

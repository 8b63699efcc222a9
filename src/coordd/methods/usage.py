"""`usage.report` and `cost.query` (docs/PROTOCOL-1.2.md section 15, issue 48).

The report walks the event log back on a reader (what its agent held when each
entry was spent), then records in one writer transaction (dedup, attribution of
what was committed since the walk, its one event): an entry from long ago costs
a reader, never the writer that every other write waits behind. The query runs
on a reader. The daemon never reads a transcript: the hooks send what they read
(`coordd_apps.hooks.usage`).
"""

from __future__ import annotations

from coordd.clock import format_time
from coordd.methods.registry import Services, Session, method
from coordd.store import usage
from coordd_wire import params_usage as U
from coordd_wire.wire_usage import CostResult, UsageReportResult


@method("usage.report")
async def usage_report(
    services: Services, p: U.UsageReportParams, session: Session
) -> UsageReportResult:
    now = format_time(services.clock.now())
    walked = await services.readers.run(usage.walk, p, now, share=session.reads)
    return await services.writer.submit(usage.report, p, walked)


@method("cost.query")
async def cost_query(services: Services, p: U.CostQueryParams, session: Session) -> CostResult:
    return await services.readers.run(usage.query, p, share=session.reads)

"""`usage.report` and `cost.query` (docs/PROTOCOL-1.2.md section 15, issue 48).

The report is a plain write (dedup, attribution and its one event in one
transaction); the query runs on a reader. The daemon never reads a transcript:
the hooks send what they read (`coordd_apps.hooks.usage`).
"""

from __future__ import annotations

from typing import Any

from coordd.methods.registry import Services, Session, method, write
from coordd.store import usage
from coordd_wire import params_usage as U

write("usage.report", usage.report)


@method("cost.query")
async def cost_query(services: Services, p: U.CostQueryParams, session: Session) -> Any:
    return await services.readers.run(usage.query, p, share=session.reads)

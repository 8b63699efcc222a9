"""Human lines for slot leases and landings (issue 35); their events' are `render.subject`."""

from __future__ import annotations

from coordd_apps.wording.advice import plural, when
from coordd_wire.wire import Landing, SlotLease


def lease_line(lease: SlotLease) -> str:
    """`dev-server  port 20001  claude-1  expires in 9 min (13:42Z)  fence 7`."""
    what = f"port {lease.port}" if lease.port is not None else f"capacity {lease.capacity}"
    task = f"  task #{lease.task_id}" if lease.task_id is not None else ""
    return (
        f"{lease.name:<24} {what:<12} {lease.agent:<20} expires {when(lease.expires_at)}"
        f"  fence {lease.fence}{task}"
    )


def landing_line(landing: Landing) -> str:
    """`#3 feature-x -> main  landing  claude-1  (4 paths)`."""
    tail = f"  {landing.reason}" if landing.reason else ""
    return (
        f"#{landing.id:<4} {landing.branch} -> {landing.onto}  {landing.state:<8}"
        f" {landing.agent}  ({plural(len(landing.paths), 'path')}){tail}"
    )

"""`coord top`'s slot and port leases (issue 35), as rows under the reservations.

No Textual here: the rows are plain values, so the demo board (which has no
leases) renders exactly as before.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime

from coordd_apps.wording import render
from coordd_client.client import Client
from coordd_client.text import clean
from coordd_wire.errors import MethodNotFound
from coordd_wire.wire import SlotLease


def slot_leases(client: Client, project: str | None) -> list[SlotLease]:
    """The live leases of `project` (None: every project); none from an older daemon."""
    try:
        return client.slots(project=project).leases
    except MethodNotFound:
        return []


def lease_rows(leases: Sequence[SlotLease], now: datetime) -> Iterator[tuple[str, ...]]:
    """ID, PATTERN, HOLDER, MODE, EXPIRES, TASK, as the reservations table has them."""
    for lease in leases:
        what = f"port {lease.port} ({lease.name})" if lease.port is not None else lease.name
        mode = "port" if lease.port is not None else f"slot of {lease.capacity}"
        task = f"#{lease.task_id}" if lease.task_id else ""
        yield (f"L{lease.id}", clean(what), clean(lease.agent), mode,
               render.relative(lease.expires_at, now), task)  # fmt: skip

"""The daemon's handlers, one per entry of the method table
(`coordd_wire.method_table`, PROTOCOL.md section 6).

Importing a noun's module registers its methods in `METHODS`; importing this package
then fails if an entry of the table has no handler (`registry.check_complete`).
"""

from __future__ import annotations

from coordd.methods import (  # noqa: F401  (registration)
    agents,
    dispatch,
    edits,
    events,
    messages,  # issue 34: messages and release requests
    reservations,
    server,
    slots,
    tasks,
    usage,  # issue 48: the token ledger
)
from coordd.methods.registry import METHODS, FollowUp, Method, Services, Session, check_complete

check_complete()

__all__ = ["METHODS", "FollowUp", "Method", "Services", "Session", "dispatch"]

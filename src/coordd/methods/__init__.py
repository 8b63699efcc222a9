"""The method table: name -> params decoder and handler (PROTOCOL.md section 6).

Importing a noun's module registers its methods in `METHODS`.
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
)
from coordd.methods.registry import METHODS, FollowUp, Method, Services, Session

__all__ = ["METHODS", "FollowUp", "Method", "Services", "Session", "dispatch"]

"""The daemon's one shutdown flag, shared by everything that must refuse new work."""

from __future__ import annotations


class Lifecycle:
    """Set once, when the drain begins (SIGTERM, SIGINT or `request_stop`).

    From then on connections answer new requests -32005, the writer admits
    no new command, the event hub registers no new waiter or subscription,
    and the background duties stop: one flag, so no two parts can disagree
    about whether the daemon is stopping.
    """

    def __init__(self) -> None:
        self.draining = False

    def begin_drain(self) -> None:
        self.draining = True

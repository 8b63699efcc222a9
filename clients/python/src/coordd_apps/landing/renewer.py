"""Keep a landing's lease alive while it waits and while its check runs, and notice
when it is fenced out.

A slot lease and a landing entry last `ttl_s` after their agent's last call
(docs/PROTOCOL-1.2.md section 13). A check can run longer than that, so a
thread renews every third of the ttl on its own connection: while the
landing is queued, with `agent.heartbeat`; once it holds the landing slot,
with `land.start` of the landing, which renews the lease and returns it, so
every beat also checks the fence. The landing is *lost* when the daemon
answers that it no longer holds the slot (-32003, or a lease with another
fence: it lapsed, and the next lander may be at work), or when no beat
reached the daemon for a whole ttl (a daemon outage that long lapses it).
Then `lost` is set, with why, and the lander stops its check and never
moves the target. A beat the daemon does not answer is retried at the next
(the client reconnects by itself): a daemon restart costs nothing.

A lander killed with `kill -9` takes the thread with it: the lease then
lapses one ttl later and the next branch goes.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType

from coordd_apps.landing.calls import AWAY
from coordd_client.client import Client
from coordd_wire.errors import CoordError


class Renewer:
    """`with Renewer(socket, agent, ttl_s):` heartbeats in the background until the end."""

    def __init__(self, socket: str, agent: str, ttl_s: float, project: str | None = None) -> None:
        self._socket = socket
        self._agent = agent
        self._project = project
        self._ttl_s = ttl_s
        self._every_s = max(ttl_s / 3, 0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="coord-land-renew", daemon=True)
        self._landing: tuple[int, int] | None = None  # (landing id, fence) once started
        self._last_ok = time.monotonic()
        #: Set when the landing no longer holds its slot; `why` says how it was lost.
        self.lost = threading.Event()
        self.why = ""
        #: Heartbeats the daemon answered (tests count them).
        self.beats = 0

    def holding(self, landing_id: int, fence: int) -> None:
        """From now on, renew the landing's slot lease and check it keeps `fence`."""
        self._landing = (landing_id, fence)
        self._last_ok = time.monotonic()  # the start that granted it was a call

    def __enter__(self) -> Renewer:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        client = Client(self._socket, agent=self._agent, project=self._project, timeout_s=30)
        try:  # not `with client`: that connects now, and a daemon away now would end the thread
            while not self._stop.wait(self._every_s) and not self.lost.is_set():
                self._beat(client)  # each call connects, or reconnects after a failure
        finally:
            client.close()

    def _beat(self, client: Client) -> None:
        landing = self._landing
        try:
            if landing is None:
                client.heartbeat(self._agent)
            else:
                lease = client.start_landing(landing[0]).lease
                if lease.fence != landing[1]:
                    self._lose(f"its lease now has fence {lease.fence}, not {landing[1]}")
                    return
        except AWAY as exc:
            if landing is not None and time.monotonic() - self._last_ok > self._ttl_s:
                self._lose(f"no heartbeat reached the daemon for {self._ttl_s:g} s ({exc.message})")
            return  # a busy or restarting daemon: the next beat tries again
        except CoordError as exc:
            if landing is not None:  # -32003 lease_lost, or someone else's slot: fenced out
                self._lose(fenced_why(exc))
            return
        self._last_ok = time.monotonic()
        self.beats += 1

    def _lose(self, why: str) -> None:
        self.why = f"landing fenced out: {why}"
        self.lost.set()


def fenced_why(exc: CoordError) -> str:
    """The daemon's refusal, and what made it when the entry it sent tells: a lease that
    lapsed (the lander was stopped, or could not reach the daemon, for a whole ttl), or
    a landing someone marked failed meanwhile."""
    landing = exc.data.get("landing")
    if not isinstance(landing, dict):
        return exc.message
    reason = str(landing.get("reason") or "")
    if reason.startswith("lapsed") or "its time ran out" in exc.message:
        return (
            f"{exc.message} (its lease lapsed while this lander was stopped or could not"
            " reach the daemon)"
        )
    if landing.get("state") == "failed" and reason:
        return f"{exc.message} (it was marked failed meanwhile: {reason})"
    return exc.message

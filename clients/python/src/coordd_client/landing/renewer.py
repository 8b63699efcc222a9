"""Keep a landing's lease alive while it waits and while its check runs.

A slot lease and a landing entry last `ttl_s` after their agent's last call
(docs/PROTOCOL-1.2.md section 13). A check can run longer than that, so a
thread sends `agent.heartbeat` on its own connection every third of the
ttl. A lander killed with `kill -9` takes the thread with it: the lease
then lapses one ttl later and the next branch goes.
"""

from __future__ import annotations

import threading
from types import TracebackType

from coordd_client.client import Client
from coordd_client.protocol.errors import CoordError


class Renewer:
    """`with Renewer(socket, agent, ttl_s):` heartbeats in the background until the end."""

    def __init__(self, socket: str, agent: str, ttl_s: float) -> None:
        self._socket = socket
        self._agent = agent
        self._every_s = max(ttl_s / 3, 0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="coord-land-renew", daemon=True)
        #: Heartbeats sent (tests count them).
        self.beats = 0

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
        try:
            client = Client(self._socket, agent=self._agent, timeout_s=30)
        except CoordError:
            return  # the landing's own calls will say the daemon is gone
        with client:
            while not self._stop.wait(self._every_s):
                try:
                    client.heartbeat(self._agent)
                    self.beats += 1
                except CoordError:
                    continue  # a busy or restarting daemon: the next beat tries again

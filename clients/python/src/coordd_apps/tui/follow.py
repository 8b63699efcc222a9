"""The board's feed from the daemon, on a thread of its own: one paged read, then the
event stream, resumed from the last seq whenever it ends (lag, restart, idle).

The thread only collects; the app drains what it collected once per frame,
so a burst of events costs one redraw, not one per event.

The first paint does not wait for the whole board: from a daemon that answers counts
(docs/PROTOCOL-1.2.md section 6c) the first `FIRST_ROWS` open tasks by id come first,
with every state's count for the status line, and the whole board follows in the same
load, before the stream starts, so no event falls between the two.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from coordd_client.client import Client, EventStream
from coordd_client.paging import URGENT_LISTS, all_tasks
from coordd_wire.errors import CoordError
from coordd_wire.wire import STATES, Event, State, Task, served_event_types

#: Seconds between tries while the daemon cannot be reached.
RETRY_S = 1.0
#: Rows of the first paint: more than a terminal shows.
FIRST_ROWS = 200
#: The states the board shows first (view_keys.STATE_FILTERS' "open").
FIRST_STATES = ["pending", "claimed", "failed"]


class Follower:
    def __init__(self, socket: Path, project: str | None) -> None:
        self.socket = socket
        self.project = project
        self.events: deque[Event] = deque()
        #: (tasks, last_seq) of a fresh load, for the app to take once.
        self.loaded: tuple[list[Task], int] | None = None
        #: The first rows of a load and every state's count, before `loaded` (the app
        #: paints them while the rest is read); None from a daemon without counts.
        self.first: tuple[list[Task], dict[State, int], int] | None = None
        self.status = "connecting"
        #: The board's id (docs/PROTOCOL-1.2.md section 1b), once loaded.
        self.board_id: str | None = None
        #: Every event type the daemon serves: with `types` omitted a subscription
        #: gets task events only, and the feed would never show a landing, a message,
        #: a slot grant or an edit (issue 47 item 7).
        self.types: list[str] | None = None
        self._stream: EventStream | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="coord-top-feed", daemon=True)
        self.on_change: Callable[[], None] | None = None

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._stream is not None:
            self._stream.close()

    def _run(self) -> None:
        last_seq: int | None = None
        while not self._stop.is_set():
            try:
                if last_seq is None:
                    last_seq = self._load()
                self.status = "live"
                self._stream = EventStream(
                    self.socket,
                    after_seq=last_seq,
                    project=self.project,
                    types=self.types,
                    reconnect=False,
                )
                for event in self._stream:
                    self.events.append(event)
                    last_seq = event.seq
                    if self._stop.is_set():
                        return
            except CoordError:
                pass
            if self._stop.is_set():
                return
            # The stream ended: the daemon went away, or closed a lagging subscription.
            if not self._reachable():
                self.status = "reconnecting"
                time.sleep(RETRY_S)

    def _load(self) -> int:
        with Client(self.socket, timeout_s=30) as client:
            info = client.server_info()  # first: what follows it is replayed
            seq = info.last_seq
            self.board_id = info.board_id
            self.types = list(served_event_types(info.features))
            if URGENT_LISTS in info.features:
                self.first = (*_first_rows(client, self.project), seq)
                self.status = "loading"  # the first rows are drawn; the rest follows
            tasks = list(all_tasks(client, project=self.project))
        self.loaded = (tasks, seq)
        return seq

    def _reachable(self) -> bool:
        try:
            with Client(self.socket, timeout_s=2) as client:
                client.ping()
        except CoordError:
            return False
        return True


def _first_rows(client: Client, project: str | None) -> tuple[list[Task], dict[State, int]]:
    """The first `FIRST_ROWS` open tasks by id and every state's count, in two reads that
    cost what the open tasks cost (the finished ones are counted, not sent)."""
    shown = client.list_tasks(project=project, state=FIRST_STATES, limit=FIRST_ROWS,
                              counts=True)  # fmt: skip
    rest = [s for s in STATES if s not in FIRST_STATES]
    counted = client.list_tasks(project=project, state=rest, order="newest", limit=1,
                                counts=True)  # fmt: skip
    counts: dict[State, int] = {**(shown.counts or {}), **(counted.counts or {})}
    return shown.tasks, counts

"""Nodes on the team store: who is live, and the one-process-per-node guard.

A node holds a session advisory lock on its name for as long as it runs
(the team store's twin of the SQLite file lock: a second daemon with the
same node name is refused at start, and the lock dies with the process or
its connection). Its row in `coordd_daemons` carries a heartbeat in the
database's time and the oldest seq its subscribers may still need, which
event retention across the team respects.
"""

from __future__ import annotations

import logging
import os
import socket
from dataclasses import dataclass
from typing import Any

import psycopg

from coordd.dsn import redact
from coordd.limits import Limits
from coordd.store.failures import NodeInUse, StoreUnavailable
from coordd.store.postgres import connection as pg

log = logging.getLogger(__name__)

_LOCK = "SELECT pg_try_advisory_lock(hashtextextended('coordd-node:' || %s, 0))"


@dataclass(frozen=True)
class Peer:
    node: str
    last_seen: str


@dataclass(frozen=True)
class TeamView:
    """What one heartbeat learned: the live peers, and the seq retention must keep after."""

    peers: list[Peer]
    keep_after: int


_HEARTBEAT = """
INSERT INTO coordd_daemons (node, host, pid, started_at, last_seen, keep_after)
VALUES (%(node)s, %(host)s, %(pid)s, clock_timestamp(), clock_timestamp(), %(keep)s)
ON CONFLICT (node) DO UPDATE SET host = excluded.host, pid = excluded.pid,
    last_seen = excluded.last_seen, keep_after = excluded.keep_after
"""
_LIVE = """
SELECT node, to_char(last_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), keep_after
FROM coordd_daemons
WHERE last_seen > clock_timestamp() - make_interval(secs => %(live)s) ORDER BY node
"""


class NodePresence:
    """The presence connection: the node lock, the heartbeat, the live peers."""

    def __init__(self, dsn: str, node: str) -> None:
        self._dsn = dsn
        self.node = node
        self._conn: psycopg.Connection[Any] | None = None
        self._host = socket.gethostname()

    def claim(self) -> list[Peer]:
        """Take the node's lock and register it; the live peers. Raises NodeInUse."""
        try:
            conn = pg.connect(self._dsn, f"coordd-{self.node}-presence")
            (locked,) = pg.one(conn, _LOCK, (self.node,))
            if not locked:
                conn.close()
                raise NodeInUse(
                    f"node {self.node!r} is already live on the team store"
                    f" {redact(self._dsn)}; give this daemon another name with --node,"
                    " or stop the other one"
                )
            self._conn = conn
            return self.heartbeat(0).peers
        except psycopg.Error as exc:
            raise StoreUnavailable(
                f"cannot use the team store {redact(self._dsn)}: {pg.describe(exc)}"
            ) from exc

    def heartbeat(self, keep_after: int) -> TeamView:
        """Say this node is alive (reconnecting, and re-taking its lock, if needed)."""
        conn = self._conn
        if conn is None or conn.closed or conn.broken:
            conn = self._reconnect()
        args = {
            "node": self.node,
            "host": self._host,
            "pid": os.getpid(),
            "keep": keep_after,
            "live": Limits.node_live_s,
        }
        conn.execute(_HEARTBEAT, args)
        rows = conn.execute(_LIVE, args).fetchall()
        peers = [Peer(node, seen) for node, seen, _ in rows if node != self.node]
        team_keep = min((int(keep) for _, _, keep in rows), default=keep_after)
        return TeamView(peers, min(team_keep, keep_after))

    def _reconnect(self) -> psycopg.Connection[Any]:
        conn = pg.connect(self._dsn, f"coordd-{self.node}-presence")
        (locked,) = pg.one(conn, _LOCK, (self.node,))
        if not locked:
            conn.close()
            raise NodeInUse(f"node {self.node!r} was taken by another daemon while we were away")
        self._conn = conn
        log.info("presence: reconnected to the team store")
        return conn

    def leave(self) -> None:
        """A clean stop: drop this node's row (its lock goes with the connection)."""
        conn = self._conn
        self._conn = None
        if conn is None:
            return
        try:
            conn.execute("DELETE FROM coordd_daemons WHERE node = %s", (self.node,))
        except psycopg.Error as exc:
            log.warning("presence: could not remove this node's row: %s", pg.describe(exc))
        finally:
            conn.close()

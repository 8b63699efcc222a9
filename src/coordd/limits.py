"""Named limits, each with its unit and the reason for its size (DESIGN.md section 5)."""

from __future__ import annotations

from dataclasses import dataclass

from coordd_client.protocol.framing import DEFAULT_MAX_FRAME


@dataclass(frozen=True)
class Limits:
    #: Largest payload accepted, in bytes (PROTOCOL.md section 2; `--max-frame`).
    max_frame: int = DEFAULT_MAX_FRAME
    #: Seconds a client has to finish a frame it started: a slow-loris guard.
    frame_completion_s: float = 10.0
    #: Seconds one write to a client may block before the client is cut off,
    #: so a client that never reads cannot pin responses in memory.
    write_timeout_s: float = 10.0
    #: Requests one connection may have executing at once (beyond: -32004).
    #: Above PROTOCOL.md's 256 writes in flight, so one pipelining client gets them all.
    max_inflight_per_connection: int = 512
    #: `task.list` / `events.since` calls one connection may have between execution
    #: and the end of writing their answer: bounds the bytes a pipelining client pins.
    large_answers_per_connection: int = 4
    #: Reader-pool connections one client connection may hold at once (the
    #: pool has 4): a flood of scans on one connection cannot queue ahead of
    #: everybody else's reads, since it never has more than this many in line.
    reader_share_per_connection: int = 2
    #: Connections served at once; more wait in the listen backlog.
    #: PROTOCOL.md asks for at least 1,024.
    max_connections: int = 4096
    #: Bytes read from a socket per receive call.
    receive_chunk: int = 65536
    #: Seconds between checks that the socket file is still ours (rebound if not).
    socket_check_interval_s: float = 2.0
    #: Seconds shutdown waits for in-flight requests before closing anyway.
    drain_timeout_s: float = 10.0


@dataclass(frozen=True)
class Retention:
    """How much of the event log to keep: events older than `max_age_s` or
    beyond the newest `max_events` go, but never one a live subscriber has not
    yet been given."""

    max_age_s: float = 7 * 24 * 3600.0
    max_events: int = 1_000_000
    interval_s: float = 60.0
    batch: int = 10_000

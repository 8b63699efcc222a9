"""Every limit of the daemon in one place, each with its unit and the reason for its size.

`Limits` is the one home: the limits in docs/OPERATIONS.md point here. The
daemon builds one instance (`coordd serve` tunes a few fields from its
flags) and hands it to the parts that take tunable limits; the fixed ones
are read from the class defaults (`Limits.reap_interval_s`), which are the
same values.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

from coordd_wire.framing import DEFAULT_MAX_FRAME


@dataclass(frozen=True)
class Limits:
    # --- connections and frames ------------------------------------------------------
    #: Largest payload accepted, in bytes (PROTOCOL.md section 2; `--max-frame`).
    max_frame: int = DEFAULT_MAX_FRAME
    #: Seconds a client has to finish a frame it started, from the frame's
    #: first byte: a slow-loris guard (`--frame-timeout`).
    frame_completion_s: float = 10.0
    #: Seconds one write to a client may block before the client is cut off,
    #: so a client that never reads cannot pin responses in memory (`--write-timeout`).
    write_timeout_s: float = 10.0
    #: Requests one connection may have executing at once, each batch item
    #: counted (beyond: -32004). Above PROTOCOL.md's 256 writes in flight, so
    #: one pipelining client gets them all.
    max_inflight_per_connection: int = 512
    #: Requests one batch may carry; a larger batch is refused whole (-32600),
    #: so one frame cannot fan out into unbounded concurrent work.
    max_batch_items: int = 256
    #: `task.list` / `events.since` calls one connection may have between execution
    #: and the end of writing their answer: bounds the bytes a pipelining client pins.
    large_answers_per_connection: int = 4
    #: Bytes of a connection's unwritten answers beyond which it stops reading
    #: requests (backpressure for large answers and notifications).
    outbox_high_water_bytes: int = 1024 * 1024
    #: Request frames one connection may have read and not yet had answered onto its
    #: socket (executing, queued for the writer, or in its outbox); at this many it
    #: reads no more until its client reads. The byte mark alone left the count of
    #: small answers to how fast the writer ran. Twice the in-flight cap: requests in
    #: flight alone never reach it, so only a client that is not reading stops here,
    #: and a pipelining client still meets -32004 `connection_inflight` first.
    unsent_answers_per_connection: int = 1024
    #: Connections served at once; more wait in the listen backlog.
    #: PROTOCOL.md asks for at least 1,024.
    max_connections: int = 4096
    #: Connections the kernel queues for us while the accept loop is busy.
    listen_backlog: int = socket.SOMAXCONN
    #: Target for RLIMIT_NOFILE, raised at start: room for the connection cap
    #: plus the database files.
    nofile_target: int = 65536
    #: Bytes read from a socket per receive call.
    receive_chunk: int = 65536
    #: Seconds between checks that the socket file is still ours (rebound if not), and
    #: that the rendezvous records are still there (written again if not).
    socket_check_interval_s: float = 2.0
    #: Seconds shutdown waits for in-flight requests before closing anyway.
    drain_timeout_s: float = 10.0

    # --- events and waiting ------------------------------------------------------------
    #: Subscriptions one connection may hold: each costs a task and a backlog.
    subscriptions_per_connection: int = 64
    #: Live events queued for one subscriber beyond which it is closed `lagged`
    #: (it resumes from its `last_seq`): a slow subscriber cannot grow memory.
    subscriber_lag_events: int = 1000
    #: Seconds a "shutdown" notice may wait for a slow client before the daemon stops anyway.
    shutdown_notice_s: float = 1.0
    #: Stored events read per statement while replaying or scanning.
    event_page: int = 1000
    #: Deliveries (an event offered to one subscription or one candidate waiter) the
    #: event hub makes before it lets the trio thread serve others: a completion that
    #: unblocks 10,000 dependents past 2,000 open waiters is 20 million of them, a few
    #: seconds of CPU, and must not hold up every ping meanwhile (issue 29, item 14).
    #: About 2 ms of work per slice on the reference machine.
    fanout_slice: int = 10_000

    # --- the writer and the readers ------------------------------------------------------
    #: Write commands admitted at once (queued or running). PROTOCOL.md asks for
    #: at least 256 before -32004; more only buys latency, not throughput.
    write_queue_capacity: int = 1024
    #: Most commands one transaction groups: bounds the time a batch holds replies.
    max_group: int = 256
    #: Seconds a write may wait for admission before it is answered -32004.
    admission_wait_s: float = 0.25
    #: Read connections: two cores, so more buys nothing but memory.
    reader_pool_size: int = 4
    #: Reader-pool connections one client connection may hold at once: a
    #: flood of scans on one connection cannot queue ahead of everybody
    #: else's reads, since it never has more than this many in line.
    reader_share_per_connection: int = 2
    #: A `file.guard` or `reservation.check` over more paths than this is bulk (a
    #: hook's edit names a few; a commit or a script, hundreds). Bulk matching runs
    #: one request at a time daemon-wide (`Services.bulk_matching`), so however many
    #: connections send it, it holds one reader and a share of the GIL, and every
    #: other read, a pre-edit guard's included, is answered beside it (issue 44).
    bulk_match_paths: int = 16
    #: Milliseconds a connection waits for SQLite's lock: long enough to ride
    #: out a user's short `sqlite3` shell transaction, short enough that a
    #: stuck lock turns into a retryable -32004 instead of a hang.
    busy_timeout_ms: int = 2_000
    #: Seconds between checkpoints. The WAL's peak size is about the write
    #: rate times this: at 1 s a machine with a fast fsync reached 48 MB in the
    #: WAL test; at 0.25 s it stays near 15 MB. An idle check reads one header.
    checkpoint_interval_s: float = 0.25
    #: WAL frames (about 4 KiB each) beyond which the writer restarts the log.
    wal_restart_frames: int = 2000
    #: Bytes the WAL file is truncated back to when the log restarts after a burst.
    wal_size_limit_bytes: int = 16 * 1024 * 1024
    #: Seconds within which an agent's last-seen is not written again: a busy
    #: agent costs one `agents` write a second, not one per claim.
    agent_seen_resolution_s: float = 1.0
    #: Agents whose last write the writer remembers for that purpose.
    agent_seen_cache: int = 10_000

    # --- reservations (PROTOCOL.md section 10) ------------------------------------------
    #: At most this many `{"pattern"|"path", "reservation"}` pairs in one answer: a
    #: broad pattern over a crowded project must not build a megabyte error.
    max_reported_conflicts: int = 1000

    # --- messages to names never seen (docs/PROTOCOL-1.2.md section 12, issue 44) ------
    #: Unread messages one name the daemon has never seen may hold; one more is
    #: refused. A tab that starts later finds a real backlog (a handful is usual,
    #: a hundred is plenty), and a typo costs at most this many rows.
    unseen_inbox_cap: int = 100
    #: Unread messages one sender may keep waiting for never-seen names: without it,
    #: one message each to 3,000 typos grows as surely as 3,000 to one. Per sender,
    #: so that one looping agent fills its own allowance, not everyone's.
    unseen_sender_cap: int = 1_000
    #: Unread messages all never-seen names together may hold, whoever sent them:
    #: the store's bound whatever number of senders. At 8 KiB a body this is
    #: 80 MiB of text, with its events.
    unseen_messages_cap: int = 10_000
    #: Seconds an unread message to a name still never seen is kept; the event
    #: retention duty then deletes it. A week, the event log's own default age.
    unseen_message_max_age_s: float = 7 * 24 * 3600.0

    # --- the token ledger (docs/PROTOCOL-1.2.md section 15, issue 48) -----------------
    #: Events (of every type) one `usage.report` may walk back through, on a reader,
    #: to find what its agent held when each entry was spent (`store/attribution.py`),
    #: in windows of primary-key ranges. A hook reports each turn, so it walks the
    #: last few hundred; past this many (a first read of a days-old transcript on a
    #: busy board) older entries are charged as unattributed instead of guessed.
    usage_attribution_events: int = 200_000
    #: Events the writer itself walks for one report: only those committed since the
    #: reader's walk, normally a handful. Past this many (a flood of writes between
    #: the two) the entries older than them are charged as unattributed: the writer's
    #: work per report is bounded whatever the log's size.
    usage_attribution_writer_events: int = 4096

    # --- background duties ---------------------------------------------------------------
    #: The reaper's period: PROTOCOL.md asks for at least once a second.
    reap_interval_s: float = 0.5
    #: Seconds the writer may take to answer a no-op before the watchdog stays silent.
    watchdog_probe_timeout_s: float = 5.0
    #: Seconds of lease a claim that lapsed while the daemon was down gets at
    #: start (`--restart-grace`; docs/USING.md, "restart grace").
    restart_grace_s: float = 30.0

    # --- team mode (PostgreSQL; docs/TEAM-MODE.md) ----------------------------------------
    #: Seconds to reach PostgreSQL: at start a dead store exits 1 within this.
    pg_connect_timeout_s: int = 4
    #: A group waits at most this long for the team's write lock, then -32004.
    pg_lock_timeout_ms: int = 5_000
    #: A daemon frozen inside a write group loses its session (and the lock) after this.
    pg_idle_in_transaction_ms: int = 5_000
    #: No single statement of coordd's may run longer than this.
    pg_statement_timeout_ms: int = 30_000
    #: While the store is down the writer tries to reconnect at most this often.
    pg_reconnect_interval_s: float = 0.5
    #: How long an unknown COMMIT outcome is chased (pg_xact_status) before -32004.
    pg_outcome_timeout_s: float = 10.0
    #: A node heartbeats this often; one silent for `node_live_s` is not live.
    node_heartbeat_s: float = 1.0
    node_live_s: float = 10.0
    #: The doorbell's safety net: the log is read at least this often anyway.
    team_poll_s: float = 1.0


@dataclass(frozen=True)
class Retention:
    """How much of the event log to keep: events older than `max_age_s` or
    beyond the newest `max_events` go, but never one a live subscriber has not
    yet been given."""

    max_age_s: float = 7 * 24 * 3600.0
    max_events: int = 1_000_000
    interval_s: float = 60.0
    batch: int = 10_000

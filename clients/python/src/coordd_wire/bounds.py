"""Every range, length and pattern of a param, declared once (PROTOCOL.md sections 4, 6, 9
and 10).

Plain data, so each surface builds its own checks from the same numbers: the daemon's
params Structs turn a `Bound` into a msgspec `Meta` (`coordd_wire.params`), the MCP
tools into a pydantic `Field` (`coordd_apps.mcp_bridge.models`). Typed twice, they
drifted (the MCP `ids` lost its cap of 256, its `tag` its 1..64); now a number that
PROTOCOL.md states is written here and nowhere else, and tests/unit/test_parity.py
checks that every surface publishes these and only these.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from coordd_wire.wire import EVENT_TYPES, STATES

#: SQLite's INTEGER is a signed 64-bit value: the largest id, fence or seq a store holds.
MAX_STORED_INT = 2**63 - 1


@dataclass(frozen=True, slots=True)
class Bound:
    """The limits of one param's value: numbers (`ge`, `le`), sizes of strings and lists
    (`min_length`, `max_length`) and a `pattern` the whole string must match.

    `pattern` is unanchored and must have no top-level `|`: each surface anchors it in
    its own dialect (`python_pattern`, `schema_pattern`), since msgspec searches with
    Python's `re` while JSON Schema consumers use ECMAScript's.
    """

    ge: float | None = None
    le: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None

    def __post_init__(self) -> None:
        sized = (self.min_length, self.max_length, self.pattern) != (None, None, None)
        if self.numeric and sized:
            raise ValueError("a Bound limits a number or a size, not both")

    @property
    def numeric(self) -> bool:
        """Whether it limits a number (`ge`, `le`) rather than a string's or list's size."""
        return self.ge is not None or self.le is not None

    def python_pattern(self) -> str | None:
        """The pattern for `re.search`: `\\Z`, unlike `$`, does not match before a
        trailing newline."""
        return None if self.pattern is None else rf"\A{self.pattern}\Z"

    def schema_pattern(self) -> str | None:
        """The pattern as JSON Schema publishes it (ECMAScript has no `\\A` or `\\Z`)."""
        return None if self.pattern is None else f"^{self.pattern}$"


# Ids and positions (stored as SQLite INTEGER).
TASK_ID = Bound(ge=1, le=MAX_STORED_INT)
RESERVATION_ID = Bound(ge=1, le=MAX_STORED_INT)
SUBSCRIPTION_ID = Bound(ge=1, le=MAX_STORED_INT)
FENCE = Bound(ge=0, le=MAX_STORED_INT)
#: An event seq, and `after_id` (0: from the start).
SEQ = Bound(ge=0, le=MAX_STORED_INT)

#: Section 4: 1..128 printable characters, no leading or trailing space. The pattern
#: refuses control characters and the spaces at either end; the daemon then refuses
#: what `str.isprintable` refuses, which no regular expression class can name.
AGENT = Bound(
    min_length=1,
    max_length=128,
    pattern=r"[^\s\x00-\x1f\x7f](?:[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f])?",
)
PROJECT = Bound(min_length=1, max_length=256)
KIND = Bound(pattern=r"[a-z][a-z0-9_-]{0,31}")
#: A title, and `title_contains`.
TITLE = Bound(min_length=1, max_length=300)
#: A body, a result, and the `reason` of a fail or cancel.
TEXT = Bound(max_length=65536)
PRIORITY = Bound(ge=-1000, le=1000)
#: One tag, and the `tag` filter.
TAG = Bound(min_length=1, max_length=64)
TAGS = Bound(max_length=16)
LEASE_S = Bound(ge=1, le=86400)
#: `task.wait`'s `timeout_s`: the longest one wait may block.
MAX_TIMEOUT_S = 3600
TIMEOUT_S = Bound(ge=0, le=MAX_TIMEOUT_S)
IDEMPOTENCY_KEY = Bound(min_length=1, max_length=128)
#: 1.2 section 5a: a claim's `request_key`, made by the client (32 hex digits from the
#: Python and TypeScript clients). Visible ASCII only: it is a token, never shown as text.
REQUEST_KEY = Bound(min_length=1, max_length=128, pattern=r"[!-~]+")
#: `task.list`'s `limit`.
LIST_LIMIT = Bound(ge=1, le=1000)
#: `events.since`'s `limit`.
EVENTS_LIMIT = Bound(ge=1, le=10000)
#: Section 9: 0..32 dependencies.
DEPENDS_ON = Bound(max_length=32)

# Section 10: reservations.
PATTERN = Bound(min_length=1, max_length=1024)
PATTERNS = Bound(min_length=1, max_length=64)
TTL_S = Bound(ge=1, le=86400)
WAIT_S = Bound(ge=0, le=600)
#: A reservation's reason, and `agent.release`'s (1.2).
REASON = Bound(max_length=1024)
#: `reservation.check` takes 1..256 paths; a client with more asks in chunks of this many.
MAX_CHECK_PATHS = 256
CHECK_PATHS = Bound(min_length=1, max_length=MAX_CHECK_PATHS)
#: Not in PROTOCOL.md: Linux's PATH_MAX, so one path cannot be a megabyte of work.
CHECK_PATH = Bound(min_length=1, max_length=4096)
#: docs/PROTOCOL-1.2.md section 10a: the segments of all the paths of one request
#: (`reservation.check`, `file.guard`, `file.record_edit`, `file.record_read`), each
#: path counting one plus its `/`s (`path_segments`). 256 paths 32 deep; a path's
#: index keys and its matching grow with its depth, so one request's work is bounded
#: by this, not by 256 paths of 2,048 segments (issue 44). A client splits a longer
#: list into requests under both bounds (`path_chunks`).
MAX_PATH_SEGMENTS = 8192


def path_segments(path: str) -> int:
    """What one path counts towards `MAX_PATH_SEGMENTS`: one, plus one per `/`."""
    return path.count("/") + 1


def path_chunks(paths: Sequence[str]) -> list[list[str]]:
    """`paths` in order, split into lists one request may carry: at most
    `MAX_CHECK_PATHS` paths and `MAX_PATH_SEGMENTS` segments each (a path is at
    most 4,096 characters, so it alone is always under the segment bound)."""
    chunks: list[list[str]] = []
    segments = 0
    for path in paths:
        count = path_segments(path)
        if not chunks or len(chunks[-1]) == MAX_CHECK_PATHS or segments + count > MAX_PATH_SEGMENTS:
            chunks.append([])
            segments = 0
        chunks[-1].append(path)
        segments += count
    return chunks


#: Not in PROTOCOL.md: `reservation.release` by id, at most this many ids at once.
RESERVATION_IDS = Bound(min_length=1, max_length=256)

# 1.2 section 11: file edits and automatic reservations.
#: A worktree: the absolute path of its top (Linux's PATH_MAX).
WORKTREE = Bound(min_length=1, max_length=4096)
#: A content hash as the hooks send it (hex SHA-256 is 64); "" when the file does not exist.
CONTENT_HASH = Bound(max_length=128)
#: Paths of one `file.guard`, `file.record_edit` or `file.record_read`: a large patch
#: is asked about in chunks of this many, as `reservation.check` is.
EDIT_PATHS = Bound(min_length=1, max_length=MAX_CHECK_PATHS)
#: `file.recent`'s `limit`.
RECENT_LIMIT = Bound(ge=1, le=1000)

# Lists of a closed set: as long as the set, so every member can be named once.
#: `state` given as a list (`task.list`, `task.wait`).
STATE_LIST = Bound(min_length=1, max_length=len(STATES))
#: `types` (`events.since`, `events.subscribe`).
EVENT_TYPE_LIST = Bound(max_length=len(EVENT_TYPES))

# 1.2 section 12: messages and release requests.
MESSAGE_ID = Bound(ge=1, le=MAX_STORED_INT)
#: A message's body: short enough that a tab's context takes a handful whole
#: (the hooks quote the first line), long enough for a paragraph and a diff hunk.
MESSAGE_BODY = Bound(min_length=1, max_length=8192)
#: How long a release request stays open unanswered (it then expires).
REQUEST_TTL_S = Bound(ge=1, le=86400)
#: `message.read`'s `limit`.
MESSAGE_LIMIT = Bound(ge=1, le=1000)
# docs/PROTOCOL-1.2.md sections 13 and 14: slots, ports and the landing queue.
#: A slot's name: a lock, a semaphore, or a port lease's name (`dev-server`, `test-db`).
SLOT_NAME = Bound(min_length=1, max_length=128, pattern=r"[A-Za-z0-9][A-Za-z0-9._:/@+-]*")
#: How many agents may hold a slot at once (1: a lock).
SLOT_CAPACITY = Bound(ge=1, le=1024)
#: A lease's id, which is also its fence.
SLOT_LEASE_ID = Bound(ge=1, le=MAX_STORED_INT)
#: `slot.release` by name or id, at most this many at once.
SLOT_NAMES = Bound(min_length=1, max_length=64)
SLOT_LEASE_IDS = Bound(min_length=1, max_length=256)
#: A port a lease may hand out (not the privileged ones below 1024).
PORT = Bound(ge=1024, le=65535)
#: A branch or target ref name as git allows it, bounded (git-check-ref-format).
BRANCH = Bound(min_length=1, max_length=255, pattern=r"[^\s~^:?*\[\\\x00-\x1f\x7f]+")
#: The paths a landing branch changes, as reported when it joins the queue.
LANDING_PATHS = Bound(max_length=4096)
LANDING_ID = Bound(ge=1, le=MAX_STORED_INT)
#: A landing's outcome text (why it failed, the check's tail).
LANDING_REASON = Bound(max_length=8192)
#: A commit id, full hex (SHA-1 or SHA-256).
COMMIT = Bound(pattern=r"[0-9a-f]{40}(?:[0-9a-f]{24})?")

# docs/PROTOCOL-1.2.md section 15 (issue 48): the token ledger.
#: A usage entry's dedup id as the host gives it (Claude Code: `message.id` and
#: `requestId` if any; Codex: the session and the response's id). Visible
#: ASCII: a token, never shown as text.
USAGE_ID = Bound(min_length=1, max_length=256, pattern=r"[!-~]+")
#: Which host counted it (`claude`, `codex`, `cursor`): a kind-like word, so the
#: dedup key (host, id) cannot collide across hosts.
USAGE_HOST = Bound(pattern=r"[a-z][a-z0-9_-]{0,31}")
#: The host's session id (a transcript is one session).
USAGE_SESSION = Bound(min_length=1, max_length=256)
#: A model name as the host reports it (`claude-sonnet-4-5-20250929`, `gpt-5-codex`).
USAGE_MODEL = Bound(min_length=1, max_length=128, pattern=r"[!-~]+")
#: When the tokens were spent: RFC 3339 with an offset or `Z`, as transcripts write it.
USAGE_AT = Bound(pattern=r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})")
#: Tokens of one kind in one entry (one model call). A call's context is at most a
#: few million tokens today; a hundred million is a wrong number, not a large one.
USAGE_TOKENS = Bound(ge=0, le=100_000_000)
#: Entries of one `usage.report`. A turn makes a handful of model calls; a hook that
#: finds more (its first read of a long transcript) sends them in chunks of this many.
MAX_USAGE_ENTRIES = 256
USAGE_ENTRIES = Bound(min_length=1, max_length=MAX_USAGE_ENTRIES)
#: A task's token budget (`task.post`'s `budget`): all four kinds of token summed, as
#: `cost.query`'s totals are. A trillion is far past any task; 0 is no budget.
BUDGET = Bound(ge=1, le=10**12)
#: `cost.query`'s `limit`: rows (task, agent, model) of one answer.
COST_LIMIT = Bound(ge=1, le=10000)

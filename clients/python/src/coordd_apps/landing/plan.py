"""What `coord land` is asked to do, and how it ends (`lander.py` does it).

The plan, its outcome and the ways a landing stops, shared by the lander, the
queue steps (`queueing.py`), the CLI and the MCP `land` tool.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from coordd_apps.landing import git, owner
from coordd_wire.bounds import LANDING_REASON
from coordd_wire.wire import Landing
from coordd_wire.wire_slots import Enqueued

#: How much of a failed check's output the landing's reason keeps (its end).
REASON_CHARS = (LANDING_REASON.max_length or 8192) - 200
#: A lease's default time (docs/PROTOCOL-1.2.md section 13), and the shortest retry window.
DEFAULT_TTL_S = 600.0
MIN_RETRY_S = 30.0


@dataclass(frozen=True)
class Plan:
    branch: str
    onto: str
    task_id: int | None = None
    #: A shell command run in the landing worktree; None: the repository's config.
    check: str | None = None
    #: Merge commits instead of a rebase; None: the repository's config.
    merge: bool | None = None
    #: Seconds to wait to head the queue; None: as long as it takes.
    wait_s: float | None = None
    ttl_s: float | None = None
    ignore_reservations: bool = False

    @property
    def retry_s(self) -> float:
        """How long a call waits for a daemon that is away: the lease's time, which an
        outage that long ends anyway (then the landing is lost, not merely delayed)."""
        return max(self.ttl_s or DEFAULT_TTL_S, MIN_RETRY_S)


@dataclass(frozen=True)
class Outcome:
    landing: Landing
    enqueued: Enqueued
    landed: bool
    commit: str | None
    reason: str | None


class LandingRefused(Exception):
    """The branch did not land; the message says why (the landing was marked failed)."""

    def __init__(self, message: str, outcome: Outcome) -> None:
        super().__init__(message)
        self.outcome = outcome


class LandingInterrupted(Exception):
    """A signal stopped the lander before the target moved; the message says what it told
    the daemon (the landing marked failed, so the queue moves on at once)."""

    def __init__(self, message: str, signum: int) -> None:
        super().__init__(message)
        self.signum = signum


class AlreadyLanding(Exception):
    """Another `coord land` that still runs is landing this very landing (same branch,
    same agent): this one leaves the landing as it is and stops."""

    def __init__(self, landing: Landing, lander: owner.Owner) -> None:
        when = time.strftime("%H:%M:%S", time.localtime(lander.since)) if lander.since else "?"
        super().__init__(
            f"landing #{landing.id} of {landing.branch} is already being landed by pid"
            f" {lander.pid} (started {when}); wait for it (`coord land --queue --onto"
            f" {landing.onto}` shows it) or stop it (kill {lander.pid}), then land again"
        )
        self.landing = landing
        self.pid = lander.pid


class FencedOut(Exception):
    """The landing no longer holds its landing slot: it must not move the target."""


def configured_check(repo: Path) -> str | None:
    return git.git(repo, "config", "--get", "coord.landCheck", check=False) or None


def configured_merge(repo: Path) -> bool:
    return git.git(repo, "config", "--bool", "--get", "coord.landMerge", check=False) == "true"

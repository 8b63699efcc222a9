"""Joining the landing queue, waiting to head it, and leaving it (`lander.py`'s steps 1, 2
and 5 on failure).

A lander holds its landing from joining to its end (`owner.py`), reports what the
daemon says of the branch, waits for the landing slot, and when it does not land
marks the landing failed at once, an interrupted one included, so the queue moves
on without waiting for the lease to lapse.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import msgspec

from coordd_apps.landing import git, owner, takeover
from coordd_apps.landing.calls import DaemonGone, retrying
from coordd_apps.landing.interrupts import Interrupted
from coordd_apps.landing.plan import (
    REASON_CHARS,
    AlreadyLanding,
    LandingInterrupted,
    LandingRefused,
    Outcome,
    Plan,
)
from coordd_client.client import Client
from coordd_wire.bounds import LANDING_PATHS, path_chunks
from coordd_wire.errors import Conflict, CoordError, LeaseLost
from coordd_wire.wire import Landing
from coordd_wire.wire_slots import Enqueued, Overlap, PathHolder, Started

#: The longest one `land.start` may wait (WAIT_S); a longer wait asks again.
_START_WAIT_S = 600.0
#: How long one `land.start` waits before the lander looks at the head's lander again
#: (whether it died here: then it is taken over).
_POLL_S = 5.0
#: The most paths one `land.enqueue` carries; a branch changing more sends these first.
_SENT_PATHS = LANDING_PATHS.max_length or 4096


@dataclass
class Progress:
    """How far the lander got: what an interrupt has to tell the daemon."""

    landing: Landing | None = None
    started: bool = False


@contextlib.contextmanager
def owning(repo: Path, landing: Landing) -> Iterator[None]:
    """Hold the landing for this lander (`owner.py`), or raise `AlreadyLanding`."""
    try:
        with owner.holding(git.common_dir(repo), landing.id):
            yield
    except owner.Owned as exc:  # raised only by taking it, before this lander did anything
        raise AlreadyLanding(landing, exc.owner) from None


def refuse_if_running(client: Client, repo: Path, plan: Plan) -> None:
    """Raise `AlreadyLanding` if this agent's open landing of the branch has a lander at
    work: joining it would take the same fence and the same worktree, and two landers
    of one landing fail it between them."""
    queue = retrying("land.list", lambda: client.landings(onto=plan.onto), plan.retry_s).landings
    for entry in queue:
        if entry.branch == plan.branch and entry.agent == client.agent:
            lander = owner.holder(git.common_dir(repo), entry.id)
            if lander is not None:
                raise AlreadyLanding(entry, lander)


def enqueue(client: Client, plan: Plan, paths: list[str]) -> Enqueued:
    """`land.enqueue`; a branch changing more paths than one call carries sends the first
    of them, and asks about the rest itself (reservations in chunks, overlaps with the
    entries ahead, whose paths the answer has), so its report is whole either way."""
    sent, rest = paths[:_SENT_PATHS], paths[_SENT_PATHS:]
    enqueued = retrying(
        "land.enqueue",
        lambda: client.enqueue_landing(
            plan.branch, plan.onto, sent, task_id=plan.task_id, ttl_s=plan.ttl_s
        ),
        plan.retry_s,
    )
    if not rest:
        return enqueued
    reserved = list(enqueued.reserved)
    for chunk in path_chunks(rest):
        found = retrying("reservation.check", partial(client.check_paths, chunk), plan.retry_s)
        reserved += [
            PathHolder(path=c.path, reservation=msgspec.structs.asdict(c.reservation))
            for c in found.conflicts
            if c.reservation.exclusive
        ]
    overlaps = {o.landing: o for o in enqueued.overlaps}
    for ahead in enqueued.ahead:
        shared = sorted(set(rest).intersection(ahead.paths))
        if shared:
            was = overlaps.get(ahead.id)
            overlaps[ahead.id] = Overlap(
                landing=ahead.id, branch=ahead.branch, agent=ahead.agent,
                paths=sorted({*(was.paths if was else []), *shared}),
            )  # fmt: skip
    return msgspec.structs.replace(enqueued, reserved=reserved, overlaps=list(overlaps.values()))


def wait_for_head(
    client: Client, repo: Path, landing_id: int, plan: Plan, say: Callable[[str], None]
) -> Started:
    """Wait to head the queue, saying whom this landing waits for whenever that changes,
    and taking over a head whose lander died on this machine (`takeover.py`)."""
    deadline = None if plan.wait_s is None else time.monotonic() + plan.wait_s
    common = git.common_dir(repo)
    wait_s = 0.0  # the first call answers at once: who is ahead
    said_for: tuple[int, str] | None = None
    while True:
        try:
            return retrying(
                "land.start",
                partial(client.start_landing, landing_id, wait_s=wait_s),
                plan.retry_s,
            )
        except Conflict as exc:
            if deadline is not None and time.monotonic() >= deadline:
                raise
            head = _head(exc)
            if head is not None:
                if said_for != (head.id, head.state):
                    said_for = (head.id, head.state)
                    lander = owner.holder(common, head.id) or owner.gone(common, head.id)
                    say(takeover.waiting_line(head, lander))
                if takeover.take_over(client, repo, head, say):
                    said_for, wait_s = None, 0.0
                    continue
            left = _START_WAIT_S if deadline is None else max(deadline - time.monotonic(), 0.0)
            wait_s = min(left, _POLL_S)


def _head(exc: Conflict) -> Landing | None:
    """The first landing ahead, as the refusal names it."""
    ahead = exc.data.get("ahead")
    if not isinstance(ahead, list) or not ahead:
        return None
    try:
        return msgspec.convert(ahead[0], Landing)
    except msgspec.ValidationError:
        return None


def refuse(client: Client, plan: Plan, enqueued: Enqueued, why: str) -> LandingRefused:
    """Mark the landing failed (the slot goes to the next) and say why, to raise. A landing
    that lapsed is failed already (-32003): it stays as the daemon marked it."""
    why = why[-REASON_CHARS:]
    landing = enqueued.landing
    try:
        landing = retrying(
            "land.finish",
            lambda: client.finish_landing(enqueued.landing.id, "failed", reason=why),
            plan.retry_s,
        ).landing
    except LeaseLost:
        pass
    return LandingRefused(why, Outcome(landing, enqueued, False, None, why))


#: How long an interrupted lander tries to reach a daemon that is away: not the lease's
#: whole time (the user asked it to stop); the landing then lapses by itself.
_INTERRUPTED_RETRY_S = 10.0


def withdraw(
    client: Client, repo: Path, plan: Plan, progress: Progress, exc: Interrupted
) -> LandingInterrupted:
    """Answer a signal that came before the target could move: mark the landing failed
    (queued or holding the slot alike: section 14 lets `failed` come from `queued`), so
    the slot and the queue move on now, not one ttl later. Returns what to raise."""
    client.close()  # the signal may have cut a call short: its answer must not be read
    landing = progress.landing
    where = "while landing" if progress.started else "while queued"
    why = f"interrupted ({exc.name}) {where}, before {plan.onto} moved"
    try:
        if landing is None:  # cut short while joining: the entry may exist all the same
            landing = find_own(client, repo, plan)
        if landing is None:
            return LandingInterrupted(f"{why}; it had not joined the queue", exc.signum)
        found = landing
        landing = retrying(
            "land.finish",
            lambda: client.finish_landing(found.id, "failed", reason=why),
            min(plan.retry_s, _INTERRUPTED_RETRY_S),
        ).landing
    except (CoordError, DaemonGone) as error:
        assert landing is not None
        return LandingInterrupted(
            f"{why}; landing #{landing.id} could not be marked failed ({error}): it lapses"
            " one --ttl after its last heartbeat",
            exc.signum,
        )
    return LandingInterrupted(said(landing, why), exc.signum)


def said(landing: Landing, why: str) -> str:
    return (
        f"landing #{landing.id} of {landing.branch}: {why}; marked {landing.state},"
        " so the next landing goes now"
    )


def find_own(client: Client, repo: Path, plan: Plan) -> Landing | None:
    """This agent's open landing of the branch, if the daemon has one."""
    queue = retrying(
        "land.list", lambda: client.landings(onto=plan.onto), _INTERRUPTED_RETRY_S
    ).landings
    common = git.common_dir(repo)
    return next(
        (
            x for x in queue
            if x.branch == plan.branch and x.agent == client.agent
            and owner.holder(common, x.id) is None  # not another lander's
        ),
        None,
    )  # fmt: skip

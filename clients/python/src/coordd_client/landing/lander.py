"""The steps of `coord land`, for one branch (docs/PROTOCOL-1.2.md section 14).

1. Join the target's queue, reporting the paths the branch changes (against
   its merge base with the target); the answer names who is ahead, paths
   another agent holds exclusively (the landing stops there, unless told to
   ignore them) and paths a branch ahead also changes.
2. Wait to head the queue; the daemon then grants the landing slot. A
   heartbeat thread keeps the lease alive from here to the end.
3. In a throwaway worktree (`<git common dir>/coord-land/<id>`, detached):
   rebase the branch onto the target (or, when `coord.landMerge` is true,
   merge it into the target with a merge commit), then run the check the
   repository configures (`git config coord.landCheck 'make test'`, or
   `--check`) there, on exactly the commit that will land.
4. Move the target to that commit, and nothing else before it: with
   `git merge --ff-only` in the worktree that has the target checked out
   (which must be clean; it is left clean and current), else with one
   compare-and-swap `git update-ref`. The branch follows (`reset --keep` in
   its clean worktree, or `update-ref`), so it shows as merged.
5. Tell the daemon (`land.landed` or `land.failed`), complete the linked
   task on success, remove the throwaway worktree.

Until step 4 nothing outside the throwaway worktree changes, so a failure or
a `kill -9` before it leaves the repository as it was; the next holder of
the slot removes what a killed lander left (`git.sweep`).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from coordd_client.client import Client
from coordd_client.landing import git
from coordd_client.landing.renewer import Renewer
from coordd_client.protocol.bounds import LANDING_REASON
from coordd_client.protocol.errors import Conflict, CoordError
from coordd_client.protocol.wire import Landing
from coordd_client.protocol.wire_slots import Enqueued, Started

#: The longest one `land.start` may wait (WAIT_S); a longer wait asks again.
_START_WAIT_S = 600.0
#: How much of a failed check's output the landing's reason keeps (its end).
_REASON_CHARS = (LANDING_REASON.max_length or 8192) - 200


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


def configured_check(repo: Path) -> str | None:
    return git.git(repo, "config", "--get", "coord.landCheck", check=False) or None


def configured_merge(repo: Path) -> bool:
    return git.git(repo, "config", "--bool", "--get", "coord.landMerge", check=False) == "true"


def land(client: Client, repo: Path, plan: Plan, say: Callable[[str], None]) -> Outcome:
    """Land `plan.branch` onto `plan.onto` through the queue; raise `LandingRefused` if not."""
    for ref in (plan.branch, plan.onto):
        if not git.resolve(repo, f"refs/heads/{ref}"):
            raise git.GitFailed(f"no local branch {ref!r} in {repo}")
    if plan.branch == plan.onto or git.is_ancestor(repo, plan.branch, plan.onto):
        # Nothing would land, and a rebase would reset the branch to the target's tip.
        raise git.GitFailed(f"nothing to land: {plan.branch} is already in {plan.onto}")
    paths = git.changed_paths(repo, plan.onto, plan.branch)
    enqueued = client.enqueue_landing(
        plan.branch, plan.onto, paths, task_id=plan.task_id, ttl_s=plan.ttl_s
    )
    landing = enqueued.landing
    say(f"queued #{landing.id}: {plan.branch} -> {plan.onto} ({len(paths)} paths changed)")
    for ahead in enqueued.ahead:
        say(f"  behind #{ahead.id} {ahead.branch} of {ahead.agent} ({ahead.state})")
    for overlap in enqueued.overlaps:
        say(f"  overlaps #{overlap.landing} {overlap.branch}: {', '.join(overlap.paths)}")
    for held in enqueued.reserved:
        who = held.reservation.get("agent")
        say(f"  reserved: {held.path} is held exclusively by {who}")
    ttl_s = landing.ttl_s
    with Renewer(str(client.socket_path), landing.agent, ttl_s):
        if enqueued.reserved and not plan.ignore_reservations:
            held_by = sorted({str(h.reservation.get("agent")) for h in enqueued.reserved})
            why = (
                f"blocked: {len(enqueued.reserved)} path(s) it changes are reserved"
                f" exclusively by {', '.join(held_by)}; nothing was merged"
            )
            raise _refuse(client, enqueued, why)
        try:
            started = _wait_for_head(client, landing.id, plan.wait_s)
        except Conflict as exc:
            raise _refuse(client, enqueued, f"not landed: {exc.message}") from None
        say(f"landing #{landing.id} (fence {started.lease.fence})")
        return _land_holding(client, repo, plan, enqueued, say)


def _wait_for_head(client: Client, landing_id: int, wait_s: float | None) -> Started:
    deadline = None if wait_s is None else time.monotonic() + wait_s
    while True:
        left = _START_WAIT_S if deadline is None else max(deadline - time.monotonic(), 0.0)
        try:
            return client.start_landing(landing_id, wait_s=min(left, _START_WAIT_S))
        except Conflict:
            if deadline is not None and time.monotonic() >= deadline:
                raise


def _land_holding(
    client: Client, repo: Path, plan: Plan, enqueued: Enqueued, say: Callable[[str], None]
) -> Outcome:
    landing = enqueued.landing
    for left in git.sweep(repo):
        say(f"  removed {left.name}, left by a lander that did not finish")
    place = git.common_dir(repo) / git.LANDING_DIR / str(landing.id)
    merge = configured_merge(repo) if plan.merge is None else plan.merge
    check = configured_check(repo) if plan.check is None else plan.check
    failed: str | None = None
    try:
        target = git.resolve(repo, f"refs/heads/{plan.onto}")
        branch_was = git.resolve(repo, f"refs/heads/{plan.branch}")
        _require_clean_target(repo, plan.onto)  # before a check that may take minutes
        commit = _prepare(repo, place, plan, target, merge=merge)
        say(f"  {'merged into' if merge else 'rebased onto'} {plan.onto}: {commit[:12]}")
        if check:
            say(f"  check: {check}")
            _run_check(place, check, landing.id)
        else:
            say("  no check configured (git config coord.landCheck CMD)")
        _move_target(repo, plan.onto, target, commit)
        _follow_branch(repo, plan.branch, branch_was, commit, merge=merge)
    except (git.GitFailed, _CheckFailed) as exc:
        failed = str(exc)
    finally:
        git.remove_worktree(repo, place)  # before the slot goes to the next lander
    if failed is not None:
        raise _refuse(client, enqueued, failed)
    done = client.finish_landing(landing.id, "landed", commit=commit)
    if plan.task_id is not None:
        try:
            client.complete(plan.task_id, result=f"landed {plan.branch} on {plan.onto}: {commit}")
        except CoordError as exc:
            say(f"  task #{plan.task_id} not completed: {exc.message}")
    say(f"landed #{landing.id}: {plan.onto} is now {commit[:12]}")
    return Outcome(done.landing, enqueued, True, commit, None)


def _prepare(repo: Path, place: Path, plan: Plan, target: str, *, merge: bool) -> str:
    """The commit that would land, made in the throwaway worktree at `place`."""
    start = target if merge else plan.branch
    git.git(repo, "worktree", "add", "--detach", str(place), start)
    try:
        if merge:
            git.git(place, "merge", "--no-ff", "--no-edit", "-m",
                    f"Merge {plan.branch} into {plan.onto}", plan.branch)  # fmt: skip
        else:
            git.git(place, "rebase", target)
    except git.GitFailed as exc:
        git.git(place, "merge" if merge else "rebase", "--abort", check=False)
        raise git.GitFailed(f"does not apply cleanly on {plan.onto}: {exc}") from None
    return git.resolve(place, "HEAD")


class _CheckFailed(Exception):
    pass


def _run_check(place: Path, command: str, landing_id: int) -> None:
    done = subprocess.run(
        command, shell=True, cwd=place, capture_output=True, text=True, check=False,
        env={**os.environ, "COORD_LANDING": str(landing_id)},
    )  # fmt: skip
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-_REASON_CHARS:]
        raise _CheckFailed(f"check failed (exit {done.returncode}): {command}\n{tail}")


def _move_target(repo: Path, onto: str, was: str, commit: str) -> None:
    """Fast-forward `onto` from `was` to `commit`, and its checkout with it, or fail."""
    if commit == was:
        return
    holder = git.checked_out(repo, onto)
    if holder is None:
        git.git(repo, "update-ref", f"refs/heads/{onto}", commit, was)  # compare and swap
        return
    _require_clean_target(repo, onto)  # again: the check ran meanwhile
    if git.resolve(holder, "HEAD") != was:
        raise git.GitFailed(f"{onto} moved while it was landing; land again")
    git.git(holder, "merge", "--ff-only", "--quiet", commit)


def _require_clean_target(repo: Path, onto: str) -> None:
    """A target checked out with uncommitted changes cannot be fast-forwarded: say so."""
    holder = git.checked_out(repo, onto)
    if holder is not None and not git.is_clean(holder):
        raise git.GitFailed(
            f"{onto} is checked out in {holder} with uncommitted changes:"
            " commit or stash them, then land again"
        )


def _follow_branch(repo: Path, branch: str, was: str, commit: str, *, merge: bool) -> None:
    """Point the landed branch at what landed (a rebase rewrote it), where that is safe."""
    if merge:
        return  # the branch's own commits are in the target as they are
    holder = git.checked_out(repo, branch)
    if holder is None:
        git.git(repo, "update-ref", f"refs/heads/{branch}", commit, was, check=False)
    elif git.is_clean(holder):
        git.git(holder, "reset", "--keep", commit, check=False)


def _refuse(client: Client, enqueued: Enqueued, why: str) -> LandingRefused:
    """Mark the landing failed (the slot goes to the next) and say why, to raise."""
    why = why[-_REASON_CHARS:]
    done = client.finish_landing(enqueued.landing.id, "failed", reason=why)
    return LandingRefused(why, Outcome(done.landing, enqueued, False, None, why))

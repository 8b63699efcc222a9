"""The steps of `coord land`, for one branch (docs/PROTOCOL-1.2.md section 14).

1. Join the target's queue, reporting the paths the branch changes (against
   its merge base with the target); the answer names who is ahead, paths
   another agent holds exclusively (the landing stops there, unless told to
   ignore them) and paths a branch ahead also changes.
   The lander holds the landing from here to its end (`owner.py`): a second
   `coord land` of the same landing refuses instead of joining it.
2. Wait to head the queue; the daemon then grants the landing slot, whose
   lease id is the landing's fence. A heartbeat thread keeps the lease alive
   from here to the end, and notices when it is lost (`renewer.py`).
3. In a throwaway worktree (`<git common dir>/coord-land/<id>`, detached,
   locked with the lander's pid): rebase the branch onto the target (or,
   when `coord.landMerge` is true, merge it into the target with a merge
   commit), then run the check the repository configures (`git config
   coord.landCheck 'make test'`, or `--check`) there, on exactly the commit
   that will land, in a process group that dies with the lander or when the
   landing is fenced out (`check.py`).
4. Move the target to that commit, and nothing else before it: the daemon
   confirms the fence is still current, then one compare-and-swap
   `git update-ref` moves the target from the commit the check was built on
   (refused if anything moved it meanwhile). If the target is checked out
   (it must be clean), that checkout follows after the swap (`read-tree -m
   -u`, a fast-forward's two-way merge), the whole move journaled
   (`checkout.py`). The branch follows (`reset --keep` in its clean
   worktree, or `update-ref`), so it shows as merged.
5. Tell the daemon (`land.landed` or `land.failed`), complete the linked
   task on success, remove the throwaway worktree.

Until step 4 nothing outside the throwaway worktree changes, so a failure or
a `kill -9` before it leaves the repository as it was; the next holder of
the slot removes what a killed lander left (`git.sweep`), and keeps what a
lander that still runs holds. A lander killed during step 4 leaves a journal;
every `coord land` first finishes such a move (`checkout.recover`): before
it joins the queue, and again once it holds the slot. Every daemon call
survives a daemon restart (`calls.py`). SIGINT, SIGTERM or SIGHUP before
step 4 marks the landing failed at once, so the queue need not wait for its
lease to lapse; from step 4's swap on, they wait until the landing is
recorded (`interrupts.py`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from coordd_apps.landing import checkout, git, journal, recorded
from coordd_apps.landing.calls import DaemonGone, retrying
from coordd_apps.landing.check import CheckFailed, CheckStopped, run_check
from coordd_apps.landing.interrupts import Guard, Interrupted, catching
from coordd_apps.landing.plan import (
    REASON_CHARS,
    FencedOut,
    LandingInterrupted,
    Outcome,
    Plan,
    configured_check,
    configured_merge,
)
from coordd_apps.landing.queueing import (
    Progress,
    enqueue,
    owning,
    refuse,
    refuse_if_running,
    said,
    wait_for_head,
    withdraw,
)
from coordd_apps.landing.renewer import Renewer, fenced_why
from coordd_apps.wording.advice import plural
from coordd_client.client import Client
from coordd_wire.errors import Conflict, CoordError, LeaseLost
from coordd_wire.wire_slots import Enqueued


def land(client: Client, repo: Path, plan: Plan, say: Callable[[str], None]) -> Outcome:
    """Land `plan.branch` onto `plan.onto` through the queue; raise `LandingRefused` if not,
    `LandingInterrupted` when SIGINT, SIGTERM or SIGHUP stopped it first (`interrupts.py`)."""
    progress = Progress()
    with catching() as guard:
        try:
            return _land(client, repo, plan, say, guard=guard, progress=progress)
        except Interrupted as exc:
            raise withdraw(client, repo, plan, progress, exc) from None


def _land(
    client: Client,
    repo: Path,
    plan: Plan,
    say: Callable[[str], None],
    *,
    guard: Guard,
    progress: Progress,
) -> Outcome:
    for ref in (plan.branch, plan.onto):
        if not git.resolve(repo, f"refs/heads/{ref}"):
            raise git.GitFailed(f"no local branch {ref!r} in {repo}")
    if plan.branch == plan.onto or git.is_ancestor(repo, plan.branch, plan.onto):
        # Nothing would land, and a rebase would reset the branch to the target's tip.
        raise git.GitFailed(f"nothing to land: {plan.branch} is already in {plan.onto}")
    # A move a killed lander left half-done is finished before anything looks at the
    # checkout; one whose lander still runs is left to it (and waited for below).
    checkout.recover(repo, plan.onto, wait_s=0, say=say, landed=_recorder(client, say))
    paths = git.changed_paths(repo, plan.onto, plan.branch)
    refuse_if_running(client, repo, plan)  # before `land.enqueue` renews its entry
    enqueued = enqueue(client, plan, paths)
    with owning(repo, enqueued.landing):
        progress.landing = enqueued.landing  # this lander's to withdraw from now on
        return _queued(client, repo, plan, say, enqueued=enqueued, changed=len(paths),
                       guard=guard, progress=progress)  # fmt: skip


def _queued(
    client: Client,
    repo: Path,
    plan: Plan,
    say: Callable[[str], None],
    *,
    enqueued: Enqueued,
    changed: int,
    guard: Guard,
    progress: Progress,
) -> Outcome:
    """In the queue, holding the landing: report, wait for its turn, land."""
    landing = enqueued.landing
    say(f"queued #{landing.id}: {plan.branch} -> {plan.onto} ({plural(changed, 'path')} changed)")
    for ahead in enqueued.ahead:
        say(f"  behind #{ahead.id} {ahead.branch} of {ahead.agent} ({ahead.state})")
    for overlap in enqueued.overlaps:
        say(f"  overlaps #{overlap.landing} {overlap.branch}: {', '.join(overlap.paths)}")
    for held in enqueued.reserved:
        who = held.reservation.get("agent")
        say(f"  reserved: {held.path} is held exclusively by {who}")
    renewer = Renewer(str(client.socket_path), landing.agent, landing.ttl_s, client.project)
    with renewer:
        if enqueued.reserved and not plan.ignore_reservations:
            held_by = sorted({str(h.reservation.get("agent")) for h in enqueued.reserved})
            paths = plural(len(enqueued.reserved), "path")
            verb = "is" if len(enqueued.reserved) == 1 else "are"
            why = (
                f"blocked: {paths} it changes {verb} reserved"
                f" exclusively by {', '.join(held_by)}; nothing was merged"
            )
            raise refuse(client, plan, enqueued, why)
        try:
            started = wait_for_head(client, repo, landing.id, plan, say)
        except Conflict as exc:
            raise refuse(client, plan, enqueued, f"not landed: {exc.message}") from None
        progress.started = True
        fence = started.lease.fence
        renewer.holding(landing.id, fence)
        say(f"landing #{landing.id} (fence {fence})")
        hold = _Hold(landing.id, fence, renewer, guard)
        return _land_holding(client, repo, plan=plan, enqueued=enqueued, hold=hold, say=say)


@dataclass(frozen=True)
class _Hold:
    """What a landing holds while it lands: its id, its fence, the thread renewing it."""

    landing_id: int
    fence: int
    renewer: Renewer
    guard: Guard


def _land_holding(
    client: Client,
    repo: Path,
    *,
    plan: Plan,
    enqueued: Enqueued,
    hold: _Hold,
    say: Callable[[str], None],
) -> Outcome:
    landing = enqueued.landing
    removed, kept = git.sweep(repo)
    for left in removed:
        say(f"  removed {left.name}, left by a lander that did not finish")
    for left in kept:
        say(f"  kept {left.name}: its lander still runs (it will not move {plan.onto})")
    failed: str | None = None
    try:
        checkout.recover(repo, plan.onto, wait_s=checkout.LOCK_WAIT_S, say=say,
                         landed=_recorder(client, say))  # fmt: skip
    except git.GitFailed as exc:
        failed = str(exc)
    if failed is not None:
        raise refuse(client, plan, enqueued, failed)
    place = git.common_dir(repo) / git.LANDING_DIR / str(landing.id)
    merge = configured_merge(repo) if plan.merge is None else plan.merge
    check = configured_check(repo) if plan.check is None else plan.check
    try:
        target = git.resolve(repo, f"refs/heads/{plan.onto}")
        branch_was = git.resolve(repo, f"refs/heads/{plan.branch}")
        _require_clean_target(repo, plan.onto)  # before a check that may take minutes
        commit = _prepare(repo, place, plan, target, merge=merge)
        say(f"  {'merged into' if merge else 'rebased onto'} {plan.onto}: {commit[:12]}")
        if check:
            say(f"  check: {check}")
            env = {**os.environ, "COORD_LANDING": str(landing.id)}
            renewer = hold.renewer
            run_check(
                place, check, env=env, stop=renewer.lost, why_stopped=lambda: renewer.why,
                keep_chars=REASON_CHARS,
            )  # fmt: skip
        else:
            say("  no check configured (git config coord.landCheck CMD)")
        lander = journal.Lander(agent=landing.agent, project=landing.project,
                                branch=plan.branch, task=plan.task_id)  # fmt: skip
        _move_target(client, repo, plan=plan, hold=hold, was=target, commit=commit, say=say,
                     lander=lander)  # fmt: skip
        _follow_branch(repo, plan.branch, branch_was, commit, merge=merge)
    except (git.GitFailed, CheckFailed) as exc:
        failed = str(exc)
    except (CheckStopped, FencedOut) as exc:
        failed = f"{exc}; {plan.onto} was not moved"
    finally:
        git.remove_worktree(repo, place)  # before the slot goes to the next lander
    if failed is not None:
        if hold.guard.caught is not None:  # during the swap, which git then did not make
            failed = f"interrupted ({hold.guard.name}) before {plan.onto} moved: {failed}"
            refused = refuse(client, plan, enqueued, failed)
            raise LandingInterrupted(said(refused.outcome.landing, failed), hold.guard.caught)
        raise refuse(client, plan, enqueued, failed)
    try:
        done = retrying(
            "land.finish",
            lambda: client.finish_landing(landing.id, "landed", commit=commit),
            plan.retry_s,
        )
    except CoordError:
        say(f"  {plan.onto} is now {commit[:12]}, but the daemon did not record #{landing.id}")
        raise
    if plan.task_id is not None:
        _complete_task(client, plan, commit, say)
    say(f"landed #{landing.id}: {plan.onto} is now {commit[:12]}")
    if hold.guard.caught is not None:
        say(f"  ({hold.guard.name} came after {plan.onto} moved: the landing was finished first)")
    return Outcome(done.landing, enqueued, True, commit, None)


def _recorder(client: Client, say: Callable[[str], None]) -> Callable[[journal.Journal], None]:
    """Record a move another lander left half-done, once finished, as its landing."""
    return lambda entry: recorded.record_landed(client.socket_path, entry, say)


def _complete_task(client: Client, plan: Plan, commit: str, say: Callable[[str], None]) -> None:
    assert plan.task_id is not None
    task_id = plan.task_id
    result = recorded.task_result(plan.branch, plan.onto, commit)
    try:
        retrying("task.complete", lambda: client.complete(task_id, result=result), plan.retry_s)
    except (CoordError, DaemonGone) as exc:
        say(f"  task #{task_id} not completed: {exc}")


def _prepare(repo: Path, place: Path, plan: Plan, target: str, *, merge: bool) -> str:
    """The commit that would land, made in the throwaway worktree at `place`."""
    start = target if merge else plan.branch
    git.add_landing_worktree(repo, place, start)
    try:
        if merge:
            git.git(place, "merge", "--quiet", "--no-ff", "--no-edit", "-m",
                    f"Merge {plan.branch} into {plan.onto}", plan.branch)  # fmt: skip
        else:
            git.git(place, "rebase", "--quiet", target)
    except git.GitFailed as exc:
        git.git(place, "merge" if merge else "rebase", "--abort", check=False)
        raise git.GitFailed(f"does not apply cleanly on {plan.onto}: {exc}") from None
    return git.resolve(place, "HEAD")


def _move_target(
    client: Client,
    repo: Path,
    *,
    plan: Plan,
    hold: _Hold,
    was: str,
    commit: str,
    say: Callable[[str], None],
    lander: journal.Lander,
) -> None:
    """Move `plan.onto` from `was` to `commit`, once, and only while this landing holds
    its fence: the daemon confirms the fence, then one compare-and-swap of the ref moves
    it (refused if anything moved it since `was`, the commit the check was built on).
    The checkout of the target, if any, follows after the swap; the move is journaled,
    so one cut short is finished later (`checkout.py`)."""
    if commit == was:
        return
    holder = git.checked_out(repo, plan.onto)
    if holder is not None:
        _require_clean_target(repo, plan.onto)  # again: the check ran meanwhile
    _confirm_fence(client, plan, hold)
    hold.guard.defer()  # from the swap to the recorded landing, an interrupt waits
    try:
        checkout.move(repo, onto=plan.onto, old=was, new=commit, holder=holder,
                      landing_id=hold.landing_id, say=say, lander=lander,
                      before_swap=hold.guard.raise_caught)  # fmt: skip
    except checkout.CheckoutLeft as exc:  # the landing stands; its journal stays
        say(f"  {plan.onto} moved, but its checkout in {holder} was not updated: {exc}")
    except checkout.SwapFailed as exc:
        raise git.GitFailed(
            f"the compare-and-swap of {plan.onto} did not complete ({exc});"
            f" {plan.onto} was not moved"
        ) from None
    except checkout.SwapRefused as exc:
        raise git.GitFailed(
            f"{plan.onto} moved while #{hold.landing_id} was landing (the compare-and-swap"
            f" from {was[:12]} was refused: {exc}); land again"
        ) from None


def _confirm_fence(client: Client, plan: Plan, hold: _Hold) -> None:
    """Ask the daemon, just before the move, whether this landing still holds its slot
    with its fence (`land.start` of a landing entry returns its lease, or -32003)."""
    if hold.renewer.lost.is_set():
        raise FencedOut(hold.renewer.why)
    try:
        lease = retrying(
            "land.start", lambda: client.start_landing(hold.landing_id), plan.retry_s
        ).lease
    except (LeaseLost, Conflict) as exc:
        raise FencedOut(f"landing fenced out: {fenced_why(exc)}") from None
    if lease.fence != hold.fence:
        raise FencedOut(f"landing fenced out: its lease has fence {lease.fence}, not {hold.fence}")


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

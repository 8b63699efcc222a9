"""Move a target and its checkout under a journal, and finish a move that was cut short.

The swap of the target ref is atomic; the update of the worktree that has the
target checked out (`git read-tree -m -u old new`) is not, and git gives no
way to make thousands of file writes atomic. So the promise is kept the other
way round (`journal.py`): the move is journaled, and a move found interrupted
is finished, by the next `coord land` onto that target (before it touches
anything), by `coord land --recover`, or by the lander itself when git
refused midway. Finishing never needs to know where the dead lander stopped:

- the ref still at the old commit: the swap never happened, and the checkout
  was never touched (it is updated only after the swap); the journal goes.
- the ref at the new commit: the checkout is brought there, path by path,
  writing only what the move changes and nothing a person changed since
  (`finish.py`).
- a stale lock git left (the target ref's `.lock` and the checkout's
  `HEAD.lock`, taken by the swap; the checkout's `index.lock`, taken by
  `read-tree`) is removed only when it is the lander's: the journal says the
  step that takes it had begun (`move`, `checkout`), the lock is no older
  than that step, every process of the landing is gone (the journal lock is
  free) and, where /proc shows it, no process has the lock open.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

from coordd_apps.landing import git, journal
from coordd_apps.landing.finish import CheckoutLeft, finish
from coordd_apps.wording.advice import plural

__all__ = ["LOCK_WAIT_S", "CheckoutLeft", "SwapFailed", "SwapRefused", "move", "recover"]

#: How long a lander (or `--recover`) waits for a target's journal lock: the time a
#: git command a killed lander started may still take to end.
LOCK_WAIT_S = 120.0
#: Clock slack when comparing an `index.lock`'s time with the journal's.
_SLACK_S = 2.0


class SwapRefused(git.GitFailed):
    """The compare-and-swap of the target was refused: it moved since; nothing changed."""


class SwapFailed(git.GitFailed):
    """The compare-and-swap did not complete although the target is where it was (git
    died of a signal, say): nothing changed."""


def move(
    repo: Path,
    *,
    onto: str,
    old: str,
    new: str,
    holder: Path | None,
    landing_id: int,
    say: Callable[[str], None],
    lander: journal.Lander | None = None,
    before_swap: Callable[[], None] = lambda: None,
) -> None:
    """Move `refs/heads/<onto>` from `old` to `new` (compare and swap), then the checkout
    in `holder`, journaled. `before_swap` runs once the journal lock is held, before
    anything is written: what it raises ends the move untouched. A swap refused because
    the target moved raises `SwapRefused`, one that failed with the target where it was
    `SwapFailed` (nothing moved either way); a checkout left behind raises
    `CheckoutLeft` (the ref moved, the journal stays)."""
    common = git.common_dir(repo)
    try:
        with journal.locked(common, onto, LOCK_WAIT_S) as fd:
            before_swap()
            entry = journal.new_journal(onto=onto, old=old, new=new, worktree=holder,
                                        landing=landing_id, lander=lander)  # fmt: skip
            journal.write(common, onto, entry)
            try:
                git.move_ref(repo, onto, new, old, f"coord land #{landing_id}", keep_fd=fd)
            except git.GitFailed as exc:
                # git killed after its commit (a Ctrl-C to the group, in the reference
                # transaction's `committed` hook) moved the ref all the same: go on.
                tip = git.resolve(repo, f"refs/heads/{onto}")
                if tip != new:
                    journal.remove(common, onto)  # refused: nothing moved
                    raise (SwapFailed if tip == old else SwapRefused)(str(exc)) from None
            if holder is not None:
                entry = msgspec.structs.replace(entry, step="checkout", since=time.time())
                journal.write(common, onto, entry)
                _update(holder, old, new, fd, say)
            journal.remove(common, onto)
    except journal.LockBusy:
        raise git.GitFailed(_busy(common, onto)) from None


def _update(holder: Path, old: str, new: str, fd: int, say: Callable[[str], None]) -> None:
    """The checkout's half of a move, after the swap: `git read-tree`, or when git refuses
    midway, finishing what it began; whatever fails then is `CheckoutLeft` (the ref moved,
    so the landing stands)."""
    try:
        git.update_checkout(holder, old, new, keep_fd=fd)
    except git.GitFailed as exc:
        say(f"  git did not update the checkout in {holder} ({exc}); finishing it")
        try:
            finish(holder, old, new, fd)
        except CheckoutLeft:
            raise
        except git.GitFailed as why:
            raise CheckoutLeft(f"{why}; `coord land --recover` finishes it") from None


def recover(
    repo: Path,
    onto: str | None,
    *,
    wait_s: float,
    say: Callable[[str], None],
    landed: Callable[[journal.Journal], None] = lambda entry: None,
) -> int:
    """Finish the interrupted moves of `onto` (None: of every target); how many were
    found. A move whose lander (or a git command it started) still runs is left to it
    when `wait_s` is 0, else waited for that long, then `GitFailed`. `landed` is called
    with each journal whose target did move: that landing landed, whatever becomes of
    its checkout, and its record and task are the caller's to complete (`recorded.py`)."""
    common = git.common_dir(repo)
    found = 0
    for target in [onto] if onto is not None else journal.targets(common):
        if _read(common, target) is None:
            continue
        try:
            with journal.locked(common, target, wait_s) as fd:
                entry = _read(common, target)
                if entry is None:
                    continue  # its lander finished meanwhile
                _require_own(repo, common, target, entry)
                found += 1
                _recover_one(repo, common, target=target, entry=entry, fd=fd, say=say,
                             landed=landed)  # fmt: skip
        except journal.LockBusy:
            if wait_s > 0:
                raise git.GitFailed(_busy(common, target)) from None
    return found


def _read(common: Path, target: str) -> journal.Journal | None:
    try:
        return journal.read(common, target)
    except msgspec.MsgspecError as exc:
        raise CheckoutLeft(
            f"the journal of a landing onto {target} is unreadable ({exc}): check"
            f" `git status` where {target} is checked out, then remove"
            f" {journal.journal_path(common, target)}"
        ) from None


def _require_own(repo: Path, common: Path, target: str, entry: journal.Journal) -> None:
    """Refuse a journal that is not what a lander of `target` writes: its ref must be
    `refs/heads/<target>`, a well-formed ref (`git check-ref-format`: no `..`, nothing
    that climbs out of `refs/`), and its checkout one of the repository's worktrees. The
    recovery removes the ref's stale `.lock` and writes files in that checkout, so a
    journal naming anything else would have it touch files outside the repository."""
    problem = None
    expected = f"refs/heads/{target}"
    if entry.ref != expected:
        problem = f"its ref is {entry.ref!r}, not {expected!r}"
    elif not git.valid_ref(repo, entry.ref):
        problem = f"{entry.ref!r} is not a valid ref name"
    elif entry.worktree is not None and Path(entry.worktree) not in {
        w.path for w in git.worktrees(repo)
    }:
        problem = f"its checkout {entry.worktree} is none of the repository's worktrees"
    if problem is not None:
        raise CheckoutLeft(
            f"{journal.journal_path(common, target)} is not a journal coord land wrote"
            f" ({problem}): nothing was touched; look at it, then remove it"
        )


def _busy(common: Path, onto: str) -> str:
    try:
        entry = journal.read(common, onto)
    except msgspec.MsgspecError:
        entry = None
    who = f"landing #{entry.landing} (pid {entry.pid})" if entry else "another landing"
    return (
        f"{who} is still moving {onto} or its checkout (it holds"
        f" {journal.lock_path(common, onto)}); land again when it has ended"
    )


def _recover_one(
    repo: Path,
    common: Path,
    *,
    target: str,
    entry: journal.Journal,
    fd: int,
    say: Callable[[str], None],
    landed: Callable[[journal.Journal], None],
) -> None:
    who = f"landing #{entry.landing} (pid {entry.pid} on {entry.host})"
    holder = Path(entry.worktree) if entry.worktree else None
    if entry.step == "move":  # killed during the swap: git may have left the ref's lock,
        _clear_stale_lock(common / f"{entry.ref}.lock", entry, repo, say)
        if holder is not None and holder.is_dir():  # and HEAD's, where HEAD names the ref
            _clear_stale_lock(_git_path(holder, "HEAD.lock"), entry, holder, say)
    tip = git.resolve(repo, entry.ref)
    if tip != entry.new:
        if entry.step == "move":  # the swap never happened: nothing was touched
            journal.remove(common, target)
            say(f"  {who} was interrupted before it moved {target}: nothing to finish")
            return
        raise CheckoutLeft(
            f"{who} was interrupted moving the checkout of {target} from"
            f" {entry.old[:12]} to {entry.new[:12]}, and {target} has moved since (to"
            f" {tip[:12] or 'nothing'}): `git status` in {entry.worktree} shows what is"
            f" left; set it right by hand, then remove {journal.journal_path(common, target)}"
        )
    landed(entry)  # the target has the commit: the landing stands, checkout or not
    if holder is None or not _still_checked_out(holder, entry.ref):
        journal.remove(common, target)
        say(f"  {who} had moved {target}; no worktree has it checked out to finish")
        return
    if entry.step == "checkout":  # killed during `read-tree`: it may have left its lock
        _clear_stale_lock(_git_path(holder, "index.lock"), entry, holder, say)
    fixed = finish(holder, entry.old, entry.new, fd)
    journal.remove(common, target)
    say(
        f"  finished the checkout of {target} in {holder} that {who} left half-updated:"
        f" {plural(fixed, 'file')} brought to {entry.new[:12]}"
    )


def _git_path(worktree: Path, name: str) -> Path:
    """A file of `worktree`'s own git dir (`.git/<name>`, or the linked worktree's)."""
    return Path(git.git(worktree, "rev-parse", "--path-format=absolute", "--git-path", name))


def _still_checked_out(holder: Path, ref: str) -> bool:
    if not holder.is_dir():
        return False
    return git.git(holder, "symbolic-ref", "--quiet", "HEAD", check=False) == ref


def _clear_stale_lock(
    lock: Path, entry: journal.Journal, where: Path, say: Callable[[str], None]
) -> None:
    """Remove a lock file (`index.lock`, `refs/heads/<target>.lock`) that the dead
    lander's git command left, and no other: one made before the journal's step began,
    or open in a running process, is someone else's, and stops the recovery."""
    try:
        made = lock.stat().st_mtime
    except FileNotFoundError:
        return
    if made < entry.since - _SLACK_S or _held_open(lock):
        raise CheckoutLeft(
            f"the move of {entry.ref} in {where} was interrupted, and {lock} is not the"
            f" interrupted lander's (older than its step, or open in a running process):"
            f" once no git command runs there, remove it and run `coord land --recover`"
        )
    lock.unlink()
    say(f"  removed {lock}, left by the interrupted landing #{entry.landing}")


def _held_open(path: Path) -> bool:
    """Whether a process has `path` open, where /proc tells (elsewhere: assume not; the
    journal lock already says no process of the landing runs)."""
    proc = Path("/proc")
    if not (proc / "self" / "fd").is_dir():
        return False
    wanted = str(path)
    for fds in proc.glob("[0-9]*/fd"):
        with contextlib.suppress(OSError):
            for fd in fds.iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd) == wanted:
                        return True
    return False

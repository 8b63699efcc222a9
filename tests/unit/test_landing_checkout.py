"""`coordd_apps.landing.checkout.recover`: a journaled move, cut short, finished.

Each test builds a small repository whose `main` moves from `old` to `new`, puts
its checkout in the state a lander killed half-way would leave (the ref moved,
the index still old, each changed file in one of the states git passes through,
its lock file left), writes the journal such a lander wrote, and recovers.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import msgspec
import pytest

from coordd_apps.landing import checkout, git, journal

ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
}  # fmt: skip
NEW_TEXT = "the new content of mod4, long enough to be cut short\n"


def run(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True,
                          env={**os.environ, **ENV})  # fmt: skip
    return done.stdout.strip()


def make_move(repo: Path) -> tuple[str, str]:
    """`main` at `old`, checked out; `new` (one commit on) changes mod1-4, deletes
    gone.txt, adds dir/new.txt and makes run.sh executable; keep.txt stays."""
    repo.mkdir()
    run(repo, "init", "-q", "-b", "main")
    for name in ("keep.txt", "mod1", "mod2", "mod3", "mod4", "gone.txt", "run.sh"):
        (repo / name).write_text(f"old {name}\n")
    run(repo, "add", ".")
    run(repo, "commit", "-q", "-m", "old")
    old = run(repo, "rev-parse", "HEAD")
    for name in ("mod1", "mod2", "mod3"):
        (repo / name).write_text(f"new {name}\n")
    (repo / "mod4").write_text(NEW_TEXT)
    (repo / "gone.txt").unlink()
    (repo / "dir").mkdir()
    (repo / "dir" / "new.txt").write_text("new\n")
    (repo / "run.sh").chmod(0o755)
    run(repo, "add", "-A")
    run(repo, "commit", "-q", "-m", "new")
    new = run(repo, "rev-parse", "HEAD")
    run(repo, "reset", "-q", "--hard", old)
    return old, new


def interrupt(repo: Path, old: str, new: str, step: str = "checkout") -> None:
    """The state a lander killed in `step` leaves, and its journal."""
    common = git.common_dir(repo)
    entry = journal.new_journal(onto="main", old=old, new=new, worktree=repo, landing=7)
    entry = msgspec.structs.replace(entry, step=step)
    journal.directory(common).mkdir(exist_ok=True)
    journal.write(common, "main", entry)
    if step == "move":
        (common / "refs" / "heads" / "main.lock").write_text(new + "\n")
        return
    run(repo, "update-ref", "refs/heads/main", new, old)
    (repo / "mod1").write_text("new mod1\n")  # written; mod2: not yet (old)
    (repo / "mod3").unlink()  # unlinked, not yet written
    (repo / "mod4").write_text(NEW_TEXT[:10])  # its write cut short
    (repo / ".git" / "index.lock").write_text("")  # read-tree's, never committed


def test_a_move_cut_short_in_its_checkout_is_finished_and_only_its_paths_written(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    old, new = make_move(repo)
    interrupt(repo, old, new)
    (repo / "keep.txt").write_text("the user's edit, not the move's\n")
    said: list[str] = []
    assert checkout.recover(repo, "main", wait_s=5, say=said.append) == 1
    assert run(repo, "status", "--porcelain") == "M keep.txt"  # kept, untouched
    assert run(repo, "diff", "--cached", "--name-only", new) == ""
    assert (repo / "mod4").read_text() == NEW_TEXT and not (repo / "gone.txt").exists()
    assert (repo / "dir" / "new.txt").read_text() == "new\n"
    assert os.stat(repo / "run.sh").st_mode & 0o100
    assert not (repo / ".git" / "index.lock").exists()
    assert journal.targets(git.common_dir(repo)) == []
    assert any("finished the checkout of main" in line for line in said), said


def test_a_file_changed_by_hand_since_is_never_overwritten(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    old, new = make_move(repo)
    interrupt(repo, old, new)
    (repo / "mod2").write_text("mine\n")
    with pytest.raises(checkout.CheckoutLeft, match=r"1 file it changes was edited since: "):
        checkout.recover(repo, "main", wait_s=5, say=lambda _: None)
    assert (repo / "mod2").read_text() == "mine\n"
    assert journal.targets(git.common_dir(repo)) == ["main"]  # still to finish
    run(repo, "checkout", new, "--", "mod2")  # the user decided
    assert checkout.recover(repo, "main", wait_s=5, say=lambda _: None) == 1
    assert run(repo, "status", "--porcelain") == ""


def test_a_move_cut_short_before_the_swap_leaves_the_target_and_drops_its_locks(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    old, new = make_move(repo)
    interrupt(repo, old, new, step="move")
    said: list[str] = []
    assert checkout.recover(repo, None, wait_s=5, say=said.append) == 1
    assert run(repo, "rev-parse", "main") == old and run(repo, "status", "--porcelain") == ""
    assert not (repo / ".git" / "refs" / "heads" / "main.lock").exists()
    assert journal.targets(git.common_dir(repo)) == []
    assert any("before it moved main" in line for line in said), said


def test_a_lock_older_than_the_step_is_not_the_landers_and_stops_the_recovery(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    old, new = make_move(repo)
    interrupt(repo, old, new)
    lock = repo / ".git" / "index.lock"
    long_ago = time.time() - 3600
    os.utime(lock, (long_ago, long_ago))
    with pytest.raises(checkout.CheckoutLeft, match="is not the interrupted lander's"):
        checkout.recover(repo, "main", wait_s=5, say=lambda _: None)
    assert lock.exists()


def test_a_move_whose_lander_still_runs_is_left_to_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    old, new = make_move(repo)
    interrupt(repo, old, new)
    common = git.common_dir(repo)
    with journal.locked(common, "main", 0):  # the lander, or a git command it started
        assert journal.busy(common, "main")
        assert checkout.recover(repo, "main", wait_s=0, say=lambda _: None) == 0
        with pytest.raises(git.GitFailed, match=r"landing #7 .* is still moving main"):
            checkout.recover(repo, "main", wait_s=0.2, say=lambda _: None)
    assert not journal.busy(common, "main")
    assert checkout.recover(repo, "main", wait_s=0, say=lambda _: None) == 1


@pytest.mark.parametrize(
    "ref", ["refs/heads/../../../victim", "../victim", "refs/heads/main/../../../../victim"]
)
def test_a_journal_whose_ref_is_not_its_targets_branch_touches_nothing(
    tmp_path: Path, ref: str
) -> None:
    """A journal names its ref, and the recovery removes that ref's stale `.lock`: a
    ref that climbs out of `refs/` (written by hand, or by anything but a lander) is
    refused before any file is looked at, and the file it points to stays."""
    repo = tmp_path / "repo"
    old, new = make_move(repo)
    common = git.common_dir(repo)
    entry = journal.new_journal(onto="main", old=old, new=new, worktree=repo, landing=7)
    journal.directory(common).mkdir(exist_ok=True)
    journal.write(common, "main", msgspec.structs.replace(entry, ref=ref))
    victim = Path(os.path.normpath(common / f"{ref}.lock"))
    victim.parent.mkdir(parents=True, exist_ok=True)
    victim.write_text("not git's\n")
    assert not victim.is_relative_to(common)
    with pytest.raises(checkout.CheckoutLeft, match="not a journal coord land wrote"):
        checkout.recover(repo, None, wait_s=5, say=lambda _: None)
    assert victim.read_text() == "not git's\n"
    assert journal.targets(common) == ["main"]  # left for a person to look at


def test_a_journal_naming_a_worktree_outside_the_repository_touches_nothing(
    tmp_path: Path,
) -> None:
    """The checkout a journal names must be one of the repository's worktrees: the
    recovery writes files there."""
    repo = tmp_path / "repo"
    old, new = make_move(repo)
    interrupt(repo, old, new)
    common = git.common_dir(repo)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "mod1").write_text("someone else's\n")
    entry = journal.read(common, "main")
    assert entry is not None
    journal.write(common, "main", msgspec.structs.replace(entry, worktree=str(elsewhere)))
    with pytest.raises(checkout.CheckoutLeft, match="not a journal coord land wrote"):
        checkout.recover(repo, "main", wait_s=5, say=lambda _: None)
    assert (elsewhere / "mod1").read_text() == "someone else's\n"
    assert (repo / ".git" / "index.lock").exists()  # nothing was removed either

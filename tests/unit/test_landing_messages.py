"""What a failed landing says: git's words without its progress reports, and why a
landing was fenced out when the daemon's answer tells."""

from __future__ import annotations

import subprocess
from pathlib import Path

from coordd_apps.landing import git
from coordd_apps.landing.renewer import fenced_why
from coordd_wire.errors import LeaseLost


def test_progress_reports_are_left_out_of_what_git_said() -> None:
    said = (
        "Preparing worktree (detached HEAD 1234567)\n"
        "Updating files:  10% (400/4000)\rUpdating files:  20% (800/4000)\r"
        "Updating files: 100% (4000/4000), done.\n"
        + "".join(f"Updating files: {n:3}% ({n}/100)\n" for n in range(1, 95))
        + "fatal: could not write 'many/f0001.txt': No space left on device\n"
    )
    assert git.without_progress(said) == (
        "Preparing worktree (detached HEAD 1234567)\n"
        "fatal: could not write 'many/f0001.txt': No space left on device"
    )


def test_a_failed_worktree_add_says_only_why(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty",
         "-m", "start"], cwd=repo, check=True,
    )  # fmt: skip
    place = tmp_path / "taken"
    place.mkdir()
    (place / "x").write_text("x")
    try:
        git.add_landing_worktree(repo, place, "main")
    except git.GitFailed as exc:
        message = str(exc)
    else:
        raise AssertionError("git worktree add into a full directory succeeded")
    assert "already exists" in message and "--quiet" in message
    assert "Preparing worktree" not in message


def test_a_lapsed_landing_is_fenced_out_saying_so() -> None:
    lapsed = LeaseLost(
        "landing #3 is failed: join the queue again",
        landing={"state": "failed", "reason": "lapsed: its lander stopped calling"},
    )
    assert "its lease lapsed while this lander was stopped" in fenced_why(lapsed)
    ran_out = LeaseLost("landing #3 is landing (its time ran out): join the queue again",
                        landing={"state": "landing", "reason": None})  # fmt: skip
    assert "its lease lapsed" in fenced_why(ran_out)
    failed = LeaseLost("landing #3 is failed: join the queue again",
                       landing={"state": "failed", "reason": "check failed (exit 1)"})  # fmt: skip
    assert fenced_why(failed).endswith("(it was marked failed meanwhile: check failed (exit 1))")
    assert fenced_why(LeaseLost("no slot")) == "no slot"

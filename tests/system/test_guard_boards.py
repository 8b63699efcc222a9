"""Which board a guard asks, and about which paths: the git pre-commit guard's agent and
project, commits of more paths than one check takes, nested repositories and submodules,
and a path no board can hold (a NUL byte). The hosts' other hooks are test_hooks.py's."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hook_runs import AGENT_A, SESSION_B, hook, hook_env, payload

from coordd_apps.hooks import guard
from coordd_client import Client
from support import COORD, DaemonProcess, coord, git_repo


@pytest.fixture
def repo(workdir: Path) -> Path:
    path = git_repo(workdir / "repo").resolve()
    (path / "src" / "auth").mkdir(parents=True)
    return path


def test_the_git_guard_honours_agent_and_project(
    daemon: DaemonProcess, repo: Path, workdir: Path
) -> None:
    """`coord --agent X --project P hook pre-commit`: X's own reservations never block
    it, and P is the board asked (setup pins them where a host curates the environment)."""
    (repo / "src" / "auth" / "login.py").write_text("x\n")
    subprocess.run(["git", "-C", str(repo), "add", "src/auth/login.py"], check=True)
    with Client(daemon.socket_path, agent="holder", project=str(repo)) as holder:
        holder.reserve(["src/auth/**"])
    elsewhere = str(workdir / "other-board")
    with Client(daemon.socket_path, agent="someone", project=elsewhere) as someone:
        someone.reserve(["src/**"])

    def pre_commit(*options: str) -> subprocess.CompletedProcess[str]:
        return coord(*options, "hook", "pre-commit", socket=daemon.socket_path, cwd=repo)

    own = pre_commit("--agent", "holder")
    assert own.returncode == 0, own.stderr
    other = pre_commit("--agent", "intruder")
    assert other.returncode == 1 and "you (intruder)" in other.stderr and "holder" in other.stderr
    there = pre_commit("--agent", "holder", "--project", elsewhere)
    assert there.returncode == 1 and "someone" in there.stderr and "src/**" in there.stderr
    after = coord("hook", "pre-commit", "--agent", "holder", socket=daemon.socket_path, cwd=repo)
    assert after.returncode == 0, after.stderr  # after the command's name too
    # The host hooks take --project as well (their agent already honoured --agent).
    edit = payload("claude-pre-edit", CWD=str(repo), SESSION=SESSION_B,
                   FILE=str(repo / "src" / "main.py"))  # fmt: skip
    assert hook("pre-edit", "claude", edit, daemon.socket_path).stdout == ""
    pinned = subprocess.run(
        [COORD, "--project", elsewhere, "hook", "pre-edit", "--host", "claude"],
        input=edit, capture_output=True, text=True, timeout=30,
        env=hook_env(daemon.socket_path), check=False,
    )  # fmt: skip
    decision = json.loads(pinned.stdout)["hookSpecificOutput"]
    assert (
        decision["permissionDecision"] == "deny"
        and "someone" in decision["permissionDecisionReason"]
    )


def test_the_git_guard_checks_a_commit_of_more_paths_than_one_check_takes(
    daemon: DaemonProcess, repo: Path
) -> None:
    """A check takes at most 256 paths (PROTOCOL.md section 10): a 301-file commit is
    asked about in chunks, and the one reserved file among them still refuses it
    (issue 29, item 4: the oversized check was refused and taken for "daemon down")."""
    files = [f"src/f{index:03}.py" for index in range(300)] + ["src/auth/login.py"]
    for name in files:
        (repo / name).write_text("x\n")
    subprocess.run(["git", "-C", str(repo), "add", "src"], check=True)
    with Client(daemon.socket_path, agent="holder", project=str(repo)) as holder:
        holder.reserve(["src/auth/login.py"])
    refused = coord("hook", "pre-commit", "--agent", "intruder", socket=daemon.socket_path,
                    cwd=repo)  # fmt: skip
    assert refused.returncode == 1, refused.stderr
    assert "src/auth/login.py" in refused.stderr and "holder" in refused.stderr
    assert "could not check" not in refused.stderr
    # The guard's own function, as the pre-edit hook calls it, chunks too.
    asked = {name: name for name in files}
    verdict = guard.check_board_paths(
        daemon.socket_path, asked, agent="intruder", project=str(repo), strict=False
    )
    assert not verdict.allowed and verdict.unreachable is None
    assert "src/auth/login.py" in verdict.reason


def _nested(repo: Path, kind: str) -> Path:
    """A repository inside `repo`: a plain nested clone, or a registered submodule."""
    if kind == "nested":
        return git_repo(repo / "vendor" / "lib").resolve()
    source = git_repo(repo.parent / "sub-origin")
    subprocess.run(
        ["git", "-C", str(repo), "-c", "protocol.file.allow=always", "submodule", "add", "-q",
         str(source), "sub"],
        check=True, capture_output=True,
    )  # fmt: skip
    return (repo / "sub").resolve()


@pytest.mark.parametrize("kind", ["nested", "submodule"])
def test_a_nested_repositorys_files_are_checked_on_its_own_board(
    daemon: DaemonProcess, repo: Path, kind: str
) -> None:
    """A nested repository (or a submodule) is a project of its own: its files are
    asked about on its board, relative to its top. Before: relative to its top but on
    the outer board, so the outer `x.py` denied the nested `x.py` (a false deny) and
    the nested board's reservation of `y.py` was never seen (a false allow)."""
    inner = _nested(repo, kind)
    with Client(daemon.socket_path, agent=AGENT_A, project=str(repo)) as a:
        a.reserve(["x.py"])  # the outer repository's x.py
    with Client(daemon.socket_path, agent=AGENT_A, project=str(inner)) as a:
        a.reserve(["y.py"])  # the nested repository's y.py

    def decide(file: Path) -> str:
        stdin = payload("claude-pre-edit", CWD=str(repo), SESSION=SESSION_B, FILE=str(file))
        done = hook("pre-edit", "claude", stdin, daemon.socket_path)
        assert done.returncode == 0, done.stderr
        if not done.stdout:
            return "allow"
        return str(json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"])

    assert decide(inner / "x.py") == "allow"
    assert decide(inner / "y.py") == "deny"
    assert decide(repo / "x.py") == "deny"
    assert decide(repo / "y.py") == "allow"


def test_a_nul_byte_in_a_hook_path_is_answered_not_a_traceback(
    daemon: DaemonProcess, repo: Path
) -> None:
    """Before: `ValueError: embedded null byte` and a traceback from the edit guard."""
    bad_file = payload("claude-pre-edit", CWD=str(repo), SESSION=SESSION_B,
                       FILE=str(repo / "src") + "/a\u0000b.py")  # fmt: skip
    done = hook("pre-edit", "claude", bad_file, daemon.socket_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    decision = json.loads(done.stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    assert "NUL" in decision["permissionDecisionReason"]
    bad_cwd = payload("claude-pre-edit", CWD=str(repo) + "\u0000x", SESSION=SESSION_B,
                      FILE="/etc/hosts")  # fmt: skip
    done = hook("pre-edit", "claude", bad_cwd, daemon.socket_path)
    assert (done.returncode, done.stdout) == (0, "") and "Traceback" not in done.stderr

"""The identity and project rules (coordd_client.identity), case by case."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from coordd_client.human import human_agent, is_human
from coordd_client.identity import (
    cursor_agent,
    default_project,
    host_agent,
    identify,
    last_resort,
    resolve_agent,
    resolve_project,
)
from coordd_client.repository import main_worktree
from coordd_client.worktree import board_path
from support import git_repo


def test_the_order_of_the_agent_rule() -> None:
    claude = {"CLAUDE_CODE_SESSION_ID": "3cda0b49-4380-4c2e-9f5e-0a1b2c3d4e5f"}
    codex = {"CODEX_THREAD_ID": "019d1afb-b2c7-72d3-b240"}
    assert resolve_agent("cli-name", {"COORD_AGENT": "env-name", **claude}).value == "cli-name"
    assert resolve_agent(None, {"COORD_AGENT": "env-name", **claude}).value == "env-name"
    assert resolve_agent(None, {**claude, **codex}) == resolve_agent(None, claude)
    assert resolve_agent(None, claude).value == "claude-3cda0b494380"
    assert resolve_agent(None, claude).source == "$CLAUDE_CODE_SESSION_ID"
    assert resolve_agent(None, codex).value == "codex-019d1afbb2c7"


CLAUDE_ENV = {"CLAUDE_CODE_SESSION_ID": "3cda0b49-4380-4c2e-9f5e-0a1b2c3d4e5f"}
CODEX_ENV = {"CODEX_THREAD_ID": "019d1afb-b2c7-72d3-b240"}
PINNED = {"COORD_AGENT": "pinned"}
#: (surface, --agent, environment, payload host, payload session, workspace) -> name.
#: Every surface asks `identify` the same question; what differs is what it knows.
IDENTITY_TABLE = [
    ("cli", None, CLAUDE_ENV, None, None, None, "claude-3cda0b494380"),
    ("cli", None, CODEX_ENV, None, None, None, "codex-019d1afbb2c7"),
    ("cli", "flag", {**PINNED, **CLAUDE_ENV}, None, None, None, "flag"),
    ("cli", None, {**PINNED, **CLAUDE_ENV}, None, None, None, "pinned"),
    ("hook", None, CLAUDE_ENV, "claude", "3cda0b49-4380", None, "claude-3cda0b494380"),
    ("hook", None, {}, "codex", "019d1afb-b2c7-72d3", None, "codex-019d1afbb2c7"),
    ("hook", "flag", CLAUDE_ENV, "claude", "ffff", None, "flag"),
    ("hook", None, PINNED, "codex", "019d", None, "pinned"),
    # A new session id in the payload wins over a stale one in the environment.
    ("hook", None, CLAUDE_ENV, "claude", "aaaa1111bbbb2222", None, "claude-aaaa1111bbbb"),
    ("hook", None, {}, "cursor", "c0ffee", "/w/shop", cursor_agent("/w/shop")),
    ("mcp", None, CLAUDE_ENV, None, None, None, "claude-3cda0b494380"),
    ("mcp", None, {"COORD_WORKSPACE": "/w/shop"}, "cursor", None, None, cursor_agent("/w/shop")),
    # Cursor's unexpanded `${workspaceFolder}` is no folder: the next rule decides.
    (
        "mcp",
        None,
        {"COORD_WORKSPACE": "${workspaceFolder}", **PINNED},
        "cursor",
        None,
        None,
        "pinned",
    ),
    ("mcp", None, {}, None, None, None, None),  # the server's own last resort follows
]


@pytest.mark.parametrize(
    ("surface", "flag", "env", "host", "session", "workspace", "expected"), IDENTITY_TABLE
)
def test_one_rule_for_every_surface(  # noqa: PLR0917 (one parameter per column)
    surface: str,
    flag: str | None,
    env: dict[str, str],
    host: str | None,
    session: str | None,
    workspace: str | None,
    expected: str | None,
) -> None:
    found = identify(
        explicit=flag, environ=env, host=host, session=session, workspace=workspace, use_tabs=False
    )
    assert (found.value if found else None) == expected, surface


def test_a_cursor_window_is_named_by_its_folder() -> None:
    assert cursor_agent("/w/shop") == cursor_agent("/w/shop/")
    assert cursor_agent("/w/shop").startswith("cursor-shop-")
    assert cursor_agent("/a/shop") != cursor_agent("/b/shop")  # two worktrees, two agents


def test_a_time_ordered_thread_id_is_named_by_its_random_end() -> None:
    """Codex's thread ids are version-7 UUIDs: their first 12 digits are the start time
    in milliseconds, so two runs started together would share them."""
    one = host_agent("codex", "019d1afb-b2c7-7e21-9f00-123456789abc")
    two = host_agent("codex", "019d1afb-b2c7-7e21-9f00-fedcba987654")
    assert (one, two) == ("codex-123456789abc", "codex-fedcba987654")
    assert host_agent("claude", "3cda0b49-4380-4f6e-8b5a-9f0e1d2c3b4a") == "claude-3cda0b494380"


def test_host_ids_keep_twelve_hex_digits() -> None:
    assert host_agent("claude", "3CDA-0B49-4380-FFFF") == "claude-3cda0b494380"
    assert host_agent("codex", "---") == "codex-unknown"


def test_without_a_host_or_a_terminal_the_name_is_the_sessions() -> None:
    env = {"USER": "Ada Lovelace"}
    resolved = last_resort(env, terminal="session")
    leader = os.getsid(0)
    assert resolved.source == "this session, which has no terminal"
    assert resolved.value.startswith("ada-lovelace-") and f"-{leader}-" in resolved.value
    assert last_resort(env, terminal="session") == resolved  # stable


def test_a_terminal_outside_any_host_is_the_human() -> None:
    """One person, one agent (issue 47 item 1): the name top and web act as."""
    resolved = last_resort({"USER": "ada"}, terminal="pts3")
    assert resolved.value == "human-ada" == human_agent({"USER": "ada"})
    assert resolved.source == "your terminal (pts3): the person here"
    assert is_human(resolved.value) and not is_human("claude-3cda0b494380")
    # A host's variables still win: its tab's shell is the tab, not the person.
    tab = resolve_agent(None, {"USER": "ada", "CLAUDE_CODE_SESSION_ID": "3cda0b49-4380"})
    assert tab.value == "claude-3cda0b494380"


def test_a_real_terminal_names_the_human(tmp_path: Path) -> None:
    """The rule under a pseudo-terminal, as a person's shell runs it: a home of its own
    (no tab registry) and no host's variables, whatever ran this suite."""
    script = "from coordd_client.identity import resolve_agent; print(resolve_agent().value)"
    env = {"USER": "ada", "HOME": str(tmp_path), "PATH": os.environ.get("PATH", "")}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    pid, fd = pty.fork()
    if pid == 0:  # the child: a session leader with the pty as its controlling terminal
        os.execve(sys.executable, [sys.executable, "-c", script], env)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 1024)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    assert out.decode().strip().splitlines()[-1] == "human-ada"


def test_the_project_rule(tmp_path: Path) -> None:
    assert resolve_project("p", {"COORD_PROJECT": "q"}).value == "p"
    assert resolve_project(None, {"COORD_PROJECT": "q"}).value == "q"
    assert default_project({}, cwd=tmp_path) == str(tmp_path.resolve())  # its own project
    repo = git_repo(tmp_path / "repo")
    (repo / "sub").mkdir()
    linked = tmp_path / "linked"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(linked)], check=True)
    top = str(repo.resolve())
    assert main_worktree(repo / "sub") == top
    assert main_worktree(linked) == top  # every worktree of a repository: one board
    assert resolve_project(None, {}, cwd=linked).source == "the git repository's main worktree"


def test_git_exporting_its_repository_does_not_mislead_a_directorys_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a linked worktree's git hook $GIT_DIR is set: asked about a directory, git
    would answer the current directory for its top. Its own repository decides."""
    repo = git_repo(tmp_path / "repo")
    linked = tmp_path / "linked"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(linked)], check=True)
    (linked / "src" / "auth").mkdir(parents=True)
    gitdir = repo.resolve() / ".git" / "worktrees" / "linked"
    monkeypatch.chdir(linked)
    monkeypatch.setenv("GIT_DIR", str(gitdir))
    monkeypatch.setenv("GIT_INDEX_FILE", str(gitdir / "index"))
    assert board_path(str(linked / "src" / "auth" / "session.py")) == "src/auth/session.py"
    assert main_worktree(linked / "src" / "auth") == str(repo.resolve())
    assert resolve_project(None).value == str(repo.resolve())  # the hook's own repository


def test_the_worktree_read_from_git_files_is_gits_own_answer(tmp_path: Path) -> None:
    """`worktree_and_main` reads git's files where it can (issue 46: no git process per
    quick call); in every layout it must say what `git rev-parse` says, or ask git."""
    from coordd_client import repository

    repo = git_repo(tmp_path / "repo")
    (repo / "sub" / "deep").mkdir(parents=True)
    linked = tmp_path / "linked"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(linked)], check=True)
    (linked / "in").mkdir()
    nested = git_repo(repo / "sub" / "nested")
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    plain = tmp_path / "plain"
    plain.mkdir()
    places = [repo, repo / "sub", repo / "sub" / "deep", linked, linked / "in", nested, bare,
              plain, repo / ".git"]  # fmt: skip
    for place in places:
        out = repository.git_output(
            place, "rev-parse", "--path-format=absolute", "--git-common-dir", "--show-toplevel"
        )
        read = repository._from_git_files(str(place))
        if isinstance(read, repository._AskGit):
            continue  # git's judgement: the caller asks it
        if out is None:
            assert read is None, place
            continue
        lines = out.splitlines()
        top = lines[1] if len(lines) > 1 else None
        common = Path(lines[0])
        assert read == (top, str(common.parent) if common.name == ".git" else top), place
    # The common layouts are read, not asked: that is the point.
    for place in (repo / "sub" / "deep", linked / "in", nested):
        assert not isinstance(repository._from_git_files(str(place)), repository._AskGit), place

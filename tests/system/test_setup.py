"""`coord setup` on fixture homes and projects that already hold other people's
configuration: merge, idempotence, exact removal, dry runs, unparsable files,
and the git guard against a real repository."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from coordd_apps.setup.hosts import CODEX_ENV_VARS
from coordd_client import Client
from support import COORD, DaemonProcess, coord_env, git_repo

OTHER_SERVER = {"mcpServers": {"github": {"command": "gh-mcp", "args": ["--stdio"]}}}
OTHER_HOOKS = {
    "permissions": {"allow": ["Bash(make test)"]},
    "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                                                             "command": "audit.sh"}]}]},
}  # fmt: skip
CODEX_CONFIG = """\
# my Codex settings
model = "gpt-5.5-codex"

[mcp_servers.github]  # the GitHub server
command = "gh-mcp"
"""
AGENTS_MD = "# Notes for agents\n\nRun `make test` before you commit.\n"


@pytest.fixture
def home(workdir: Path) -> Path:
    path = workdir / "home"
    (path / ".claude").mkdir(parents=True)
    (path / ".codex").mkdir()
    (path / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    return path


@pytest.fixture
def project(workdir: Path) -> Path:
    path = git_repo(workdir / "project").resolve()
    (path / ".mcp.json").write_text(json.dumps(OTHER_SERVER, indent=4) + "\n")
    (path / ".claude").mkdir()
    (path / ".claude" / "settings.json").write_text(json.dumps(OTHER_HOOKS))
    (path / "AGENTS.md").write_text(AGENTS_MD)
    return path


def setup(*args: str, home: Path, cwd: Path, socket: Path) -> subprocess.CompletedProcess[str]:
    env = coord_env(socket, HOME=str(home), XDG_STATE_HOME=str(home / ".state"))
    return subprocess.run(
        [COORD, "setup", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=60,
        check=False,
    )  # fmt: skip


def snapshot(*roots: Path) -> dict[str, bytes]:
    files = {}
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and ".git" not in path.parts and ".state" not in path.parts:
                files[str(path)] = path.read_bytes()
    return files


def test_claude_setup_merges_is_idempotent_and_removes_exactly(
    home: Path, project: Path, workdir: Path
) -> None:
    socket = workdir / "s.sock"
    original = snapshot(home, project)
    done = setup("claude", "--worktree", home=home, cwd=project, socket=socket)
    assert done.returncode == 0, done.stderr
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert servers["github"] == OTHER_SERVER["mcpServers"]["github"]  # others' keys stay
    assert servers["coord"] == {"command": COORD, "args": ["mcp"]}
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert settings["permissions"] == OTHER_HOOKS["permissions"]
    pre = settings["hooks"]["PreToolUse"]
    assert pre[0]["hooks"][0]["command"] == "audit.sh"  # theirs first, untouched
    assert pre[1]["matcher"] == "Edit|Write|MultiEdit|NotebookEdit"
    assert "hook pre-edit --host claude" in pre[1]["hooks"][0]["command"]
    stop = settings["hooks"]["Stop"][0]["hooks"][0]
    assert stop["asyncRewake"] is True and "hook wake" in stop["command"]
    assert stop["timeout"] > float(stop["command"].split("--max-wait ")[1])  # outlives it
    # A wake is announced as coord's, not as "Stop hook feedback" (a failed hook).
    assert stop["rewakeSummary"].startswith("coord:") and stop["rewakeMessage"]
    # Every session source gets the board: startup, resume, clear, compact and fork.
    assert "matcher" not in settings["hooks"]["SessionStart"][0]
    assert set(settings["hooks"]) == {
        "PreToolUse",
        "PostToolUse",
        "SessionStart",
        "Stop",
        "SessionEnd",
        "UserPromptSubmit",  # issue 34: message delivery
    }
    # Edits and reads are recorded (issue 33): the stale-write guard needs both; the
    # same hook delivers unread messages after edits and shells (issue 34).
    (post,) = settings["hooks"]["PostToolUse"]
    assert post["matcher"] == "Edit|Write|MultiEdit|NotebookEdit|Read|Bash"
    assert "hook post-tool --host claude" in post["hooks"][0]["command"]
    notes = (project / "CLAUDE.md").read_text()
    assert notes.startswith("<!-- BEGIN COORD -->") and "<!-- END COORD -->" in notes
    assert COORD not in notes  # a file a team may commit holds no machine-local path
    after_first = snapshot(home, project)
    again = setup("claude", "--worktree", home=home, cwd=project, socket=socket)
    assert again.returncode == 0 and "already set up; nothing changed" in again.stdout
    assert snapshot(home, project) == after_first
    removed = setup("claude", "--worktree", "--remove", home=home, cwd=project, socket=socket)
    assert removed.returncode == 0, removed.stderr
    assert snapshot(home, project) == original  # the original bytes, files it made gone


def test_removal_after_someone_edited_the_file_takes_out_only_ours(
    home: Path, project: Path, workdir: Path
) -> None:
    socket = workdir / "s.sock"
    setup("claude", "--worktree", home=home, cwd=project, socket=socket)
    mcp_file = project / ".mcp.json"
    doc = json.loads(mcp_file.read_text())
    doc["mcpServers"]["added-later"] = {"command": "x"}
    mcp_file.write_text(json.dumps(doc))
    setup("claude", "--worktree", "--remove", home=home, cwd=project, socket=socket)
    assert json.loads(mcp_file.read_text())["mcpServers"] == {
        "github": OTHER_SERVER["mcpServers"]["github"],
        "added-later": {"command": "x"},
    }


def test_codex_setup_keeps_toml_comments_and_order(
    home: Path, project: Path, workdir: Path
) -> None:
    socket = workdir / "s.sock"
    original = snapshot(home, project)
    assert setup("codex", "--worktree", home=home, cwd=project, socket=socket).returncode == 0
    config = (home / ".codex" / "config.toml").read_text()
    assert config.startswith(CODEX_CONFIG)  # comments, order and spacing survive
    assert "[mcp_servers.coord]" in config and "startup_timeout_sec = 20" in config
    hooks = json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]
    assert hooks["PreToolUse"][0]["matcher"] == "^apply_patch$"
    assert hooks["PostToolUse"][0]["matcher"] == "^(apply_patch|Bash)$"  # edits recorded
    assert "hook post-tool --host codex" in hooks["PostToolUse"][0]["hooks"][0]["command"]
    # A turn's usage reaches the ledger as the turn ends (Stop), not at the next prompt.
    assert "hook turn-end --host codex" in hooks["Stop"][0]["hooks"][0]["command"]
    # A Codex tab gives its claims back when it exits (its default timeout is 1 s).
    end = hooks["SessionEnd"][0]["hooks"][0]
    assert (
        "hook session-end --host codex" in end["command"] and end["timeout"] == 3
    )  # Codex clamps it to 3 s
    agents = (project / "AGENTS.md").read_text()
    assert agents.startswith(AGENTS_MD) and "<!-- BEGIN COORD -->" in agents
    assert (
        setup("codex", "--worktree", "--remove", home=home, cwd=project, socket=socket).returncode
        == 0
    )
    assert snapshot(home, project) == original


def test_codex_setup_keeps_the_keys_and_comments_it_did_not_write(
    home: Path, project: Path, workdir: Path
) -> None:
    """A hand-added `env` (and a comment) in `[mcp_servers.coord]` survive a re-run of
    setup; removal takes the server's table whole, theirs with it: a table left without
    its `command` stops Codex from starting ("invalid transport", issue 43's review)."""
    socket = workdir / "s.sock"
    assert setup("codex", "--worktree", home=home, cwd=project, socket=socket).returncode == 0
    config = home / ".codex" / "config.toml"
    pinned = '# pinned by hand: this Codex is one agent\nenv = { COORD_AGENT = "codex-main" }\n'
    edited = (
        config.read_text().replace("tool_timeout_sec = 90", "tool_timeout_sec = 90  # my note")
        + pinned
    )
    config.write_text(edited)
    again = setup("codex", "--worktree", home=home, cwd=project, socket=socket)
    assert again.returncode == 0, again.stderr
    assert config.read_text() == edited  # nothing of ours was missing: the same bytes
    # An older setup's command (a moved venv) is rewritten in place, theirs kept.
    config.write_text(edited.replace(f'command = "{COORD}"', 'command = "/old/venv/bin/coord"'))
    moved = setup("codex", "--worktree", home=home, cwd=project, socket=socket)
    assert moved.returncode == 0, moved.stderr
    assert config.read_text() == edited
    removed = setup("codex", "--worktree", "--remove", home=home, cwd=project, socket=socket)
    assert removed.returncode == 0, removed.stderr
    assert config.read_text() == CODEX_CONFIG
    # With only setup's keys in it, the same.
    config.write_text(edited.replace(pinned, ""))
    assert (
        setup("codex", "--worktree", "--remove", home=home, cwd=project, socket=socket).returncode
        == 0
    )
    assert config.read_text() == CODEX_CONFIG


def test_codex_setup_passes_what_codex_strips_and_keeps_the_users_own(
    home: Path, project: Path, workdir: Path
) -> None:
    """Issue 43: Codex starts MCP servers with a short list of variables; setup lists in
    `env_vars` the ones that decide which board `coord mcp` reaches, after any the user
    listed there, and keeps their `env` table; a re-run changes nothing, and removal
    takes coord's server table whole."""
    import tomlkit

    socket = workdir / "s.sock"
    config = home / ".codex" / "config.toml"
    theirs = (
        '[mcp_servers.coord]\ncommand = "/old/venv/bin/coord"\n'
        'env_vars = ["MY_TOKEN"]  # mine\nenv = { COORD_AGENT = "codex-main" }\n'
    )
    config.write_text(CODEX_CONFIG + "\n" + theirs)
    done = setup("codex", home=home, cwd=project, socket=socket)
    assert done.returncode == 0, done.stderr
    table = tomlkit.parse(config.read_text())["mcp_servers"]["coord"].unwrap()
    assert table["env_vars"] == ["MY_TOKEN", *CODEX_ENV_VARS]  # theirs first
    assert table["env"] == {"COORD_AGENT": "codex-main"} and table["command"] == COORD
    assert "--socket" not in table["args"]  # live values through env_vars, nothing pinned
    assert "# mine" in config.read_text()
    after_first = config.read_bytes()
    again = setup("codex", home=home, cwd=project, socket=socket)
    assert again.returncode == 0 and "already set up" in again.stdout, again.stdout
    assert config.read_bytes() == after_first
    # An older setup (before env_vars) is brought up to date in place.
    old = tomlkit.parse(config.read_text())
    del old["mcp_servers"]["coord"]["env_vars"]
    config.write_text(tomlkit.dumps(old))
    assert setup("codex", home=home, cwd=project, socket=socket).returncode == 0
    assert tomlkit.parse(config.read_text())["mcp_servers"]["coord"]["env_vars"] == list(
        CODEX_ENV_VARS
    )
    config.write_bytes(after_first.replace(b"90\n", b"90 # edited since\n"))
    removed = setup("codex", "--remove", home=home, cwd=project, socket=socket)
    assert removed.returncode == 0, removed.stderr
    left = tomlkit.parse(config.read_text()).unwrap()
    assert "coord" not in left.get("mcp_servers", {}), left  # never a server without a command


def test_cursor_setup_writes_its_three_files(home: Path, project: Path, workdir: Path) -> None:
    socket = workdir / "s.sock"
    assert setup("cursor", "--worktree", home=home, cwd=project, socket=socket).returncode == 0
    hooks = json.loads((project / ".cursor" / "hooks.json").read_text())
    assert hooks["version"] == 1 and "hook pre-edit --host cursor" in json.dumps(hooks)
    # The window's server and its hooks both name the agent from the window's folder
    # (identity.cursor_agent), so each worktree's window is its own agent; the socket is
    # pinned, since Cursor curates the environment it gives them.
    server = json.loads((project / ".cursor" / "mcp.json").read_text())["mcpServers"]["coord"]
    assert server["args"][-3:] == ["mcp", "--host", "cursor"]
    assert server["args"][0] == "--socket" and server["env"] == {
        "COORD_WORKSPACE": "${workspaceFolder}"
    }
    assert "--agent" not in json.dumps(hooks) and "--socket" in json.dumps(hooks)
    again = setup("cursor", "--worktree", home=home, cwd=project, socket=socket)
    assert "already set up" in again.stdout
    rule = (project / ".cursor" / "rules" / "coord.mdc").read_text()
    assert rule.startswith("---\ndescription:") and "alwaysApply: true" in rule
    assert (
        setup("cursor", "--worktree", "--remove", home=home, cwd=project, socket=socket).returncode
        == 0
    )
    assert not (project / ".cursor").joinpath("hooks.json").exists()


def test_user_scope_is_the_default_and_writes_nothing_in_the_repository(
    home: Path, project: Path, workdir: Path
) -> None:
    """The default covers every worktree, later ones too, with nothing to commit."""
    socket = workdir / "s.sock"
    inside = snapshot(project)
    done = setup("claude", home=home, cwd=project, socket=socket)
    assert done.returncode == 0, done.stderr
    assert "coord" in json.loads((home / ".claude.json").read_text())["mcpServers"]
    assert "hooks" in json.loads((home / ".claude" / "settings.json").read_text())
    notes = (home / ".claude" / "CLAUDE.md").read_text()
    assert "BEGIN COORD" in notes and f"`{COORD}`" in notes  # where coord is, on this machine
    assert snapshot(project) == inside
    codex = setup("codex", home=home, cwd=workdir, socket=socket)
    assert codex.returncode == 0 and "/hooks" in codex.stdout  # the trust review, said
    assert "SessionEnd" in json.loads((home / ".codex" / "hooks.json").read_text())["hooks"]
    assert setup("claude", "--user", home=home, cwd=workdir, socket=socket).returncode == 0
    worktree = setup("claude", "--worktree", home=home, cwd=project, socket=socket)
    assert "do not commit them" in worktree.stdout


def test_dry_run_and_survey_write_nothing(home: Path, project: Path, workdir: Path) -> None:
    socket = workdir / "s.sock"
    original = snapshot(home, project)
    dry = setup("claude", "--dry-run", home=home, cwd=project, socket=socket)
    assert dry.returncode == 0 and "+++ " in dry.stdout and '"coord"' in dry.stdout
    survey = setup(home=home, cwd=project, socket=socket)
    assert survey.returncode == 0
    assert "claude: `coord setup claude` would write" in survey.stdout
    assert "codex: `coord setup codex` would write" in survey.stdout
    assert "nothing was written" in survey.stdout
    assert snapshot(home, project) == original


def test_the_survey_names_each_host_it_skips(home: Path, project: Path, workdir: Path) -> None:
    """A host that is not installed is named, with what was looked for, never left out in
    silence (issue 47 item 11). PATH holds git alone, so no host's program is found."""
    git_only = workdir / "bin"
    git_only.mkdir()
    (git_only / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    env = coord_env(workdir / "s.sock", HOME=str(home), XDG_STATE_HOME=str(home / ".state"))
    env["PATH"] = str(git_only)
    survey = subprocess.run(
        [COORD, "setup"],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        timeout=60,
        check=False,
    )
    assert survey.returncode == 0, survey.stderr
    assert (
        "cursor: not installed here (no ~/.cursor, no `cursor` on PATH); skipped" in survey.stdout
    )
    assert "claude: `coord setup claude` would write" in survey.stdout
    outside = subprocess.run(
        [COORD, "setup", "--json"], capture_output=True, text=True, env=env, cwd=workdir,
        timeout=60, check=False,
    )  # fmt: skip
    assert json.loads(outside.stdout) == {
        "hosts": ["claude", "codex"],
        "skipped": ["cursor", "git"],
    }


def test_an_unparsable_file_stops_the_whole_host(home: Path, project: Path, workdir: Path) -> None:
    socket = workdir / "s.sock"
    (project / ".claude" / "settings.json").write_text("{ this is not json")
    original = snapshot(home, project)
    refused = setup("claude", "--worktree", home=home, cwd=project, socket=socket)
    assert refused.returncode == 1
    assert "settings.json is not valid JSON" in refused.stderr
    assert "nothing was written" in refused.stderr
    assert snapshot(home, project) == original  # not even .mcp.json, which parsed


def commit(repo: Path, *paths: str, socket: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = coord_env(socket, autostart=False, **env)
    for path in paths:
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(f"{path}\n")
        subprocess.run(["git", "-C", str(repo), "add", path], check=True)
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q",
         "-m", "change"],
        capture_output=True, text=True, env=environ, timeout=60, check=False,
    )  # fmt: skip


def test_the_git_guard_refuses_reserved_files_and_chains_the_old_hook(
    daemon: DaemonProcess, home: Path, workdir: Path
) -> None:
    repo = git_repo(workdir / "guarded").resolve()
    hooks_dir = repo / ".git" / "hooks"
    old_hook = hooks_dir / "pre-commit"
    marker = workdir / "old-hook-ran"
    old_hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    old_hook.chmod(0o755)
    old_bytes = old_hook.read_bytes()
    done = setup("git", home=home, cwd=repo, socket=daemon.socket_path)
    assert done.returncode == 0, done.stderr
    with Client(daemon.socket_path, agent="claude-other", project=str(repo)) as other:
        other.reserve(["src/auth/**"])
    env = {"COORD_AGENT": "me", "HOME": str(home)}
    free = commit(repo, "docs/readme.md", socket=daemon.socket_path, **env)
    assert free.returncode == 0, free.stderr
    assert marker.exists()  # the hook that was there still runs
    marker.unlink()
    refused = commit(repo, "src/auth/login.py", socket=daemon.socket_path, **env)
    assert refused.returncode != 0
    assert "src/auth/login.py" in refused.stderr and "claude-other" in refused.stderr
    assert not marker.exists()
    forced = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q",
         "-m", "forced"],
        capture_output=True, text=True, timeout=60, check=False,
        env=coord_env(daemon.socket_path, COORD_AGENT="me", COORD_ALLOW_RESERVED="1"),
    )  # fmt: skip
    assert forced.returncode == 0, forced.stderr
    assert setup("git", "--remove", home=home, cwd=repo, socket=daemon.socket_path).returncode == 0
    assert old_hook.read_bytes() == old_bytes
    assert not (hooks_dir / "pre-commit.coord-chained").exists()


def git_in(where: Path, *args: str, socket: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(where), "-c", "user.email=a@b", "-c", "user.name=a", *args],
        capture_output=True, text=True, env=coord_env(socket, autostart=False, **env),
        timeout=60, check=False,
    )  # fmt: skip


def test_the_git_guard_refuses_reserved_files_in_a_linked_worktree(
    daemon: DaemonProcess, home: Path, workdir: Path
) -> None:
    """git runs the hook of a linked worktree with $GIT_DIR (and $GIT_INDEX_FILE) set:
    paths must still be named from that worktree's top, for staged files, `commit -a`,
    both names of a rename and names with spaces, and the board is the main worktree's."""
    repo = git_repo(workdir / "guarded").resolve()
    socket = daemon.socket_path

    def ok(where: Path, *args: str) -> None:
        done = git_in(where, *args, socket=socket)
        assert done.returncode == 0, done.stderr

    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "my file.py").write_text("one\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "a.md").write_text("a\n")
    ok(repo, "add", ".")
    ok(repo, "commit", "-q", "-m", "files")
    linked = (workdir / "linked").resolve()
    ok(repo, "worktree", "add", "-q", str(linked))
    assert setup("git", home=home, cwd=repo, socket=socket).returncode == 0
    with Client(socket, agent="claude-other", project=str(repo)) as other:
        other.reserve(["src/auth/**"])
    env = {"COORD_AGENT": "me", "HOME": str(home)}

    def refused(where: Path, *args: str) -> str:
        done = git_in(where, "commit", "-q", "-m", "change", *args, socket=socket, **env)
        assert done.returncode != 0, f"committed in {where}: {done.stdout}{done.stderr}"
        assert "claude-other" in done.stderr
        return done.stderr

    for where in (repo, linked):
        (where / "src" / "auth" / "session.py").write_text("new\n")
        ok(where, "add", "src/auth/session.py")
        assert "src/auth/session.py is reserved" in refused(where)
        ok(where, "reset", "-q")
        (where / "src" / "auth" / "session.py").unlink()
    # `commit -a`: the index committed is a temporary one ($GIT_INDEX_FILE).
    (linked / "src" / "auth" / "my file.py").write_text("two\n")
    assert "src/auth/my file.py is reserved" in refused(linked, "-a")
    assert "src/auth/my file.py is reserved" in refused(linked, "src/auth/my file.py")
    ok(linked, "checkout", "--", ".")
    # A rename out of the reserved directory, and one into it.
    ok(linked, "mv", "src/auth/my file.py", "docs/moved.py")
    assert "src/auth/my file.py is reserved" in refused(linked)
    ok(linked, "mv", "docs/moved.py", "src/auth/my file.py")
    ok(linked, "mv", "docs/a.md", "src/auth/a.md")
    assert "src/auth/a.md is reserved" in refused(linked)
    ok(linked, "mv", "src/auth/a.md", "docs/a.md")
    # What nobody reserved still commits from the linked worktree.
    (linked / "docs" / "free.md").write_text("free\n")
    ok(linked, "add", "docs/free.md")
    free = git_in(linked, "commit", "-q", "-m", "free", socket=socket, **env)
    assert free.returncode == 0, free.stderr


def test_the_git_guard_refuses_a_relative_hooks_path(
    home: Path, project: Path, workdir: Path
) -> None:
    """A relative core.hooksPath (husky's `.husky`) is resolved in each worktree, so a
    guard written into one would leave every linked worktree unguarded: say so instead."""
    subprocess.run(["git", "-C", str(project), "config", "core.hooksPath", ".hooks"], check=True)
    refused = setup("git", home=home, cwd=project, socket=workdir / "s.sock")
    assert refused.returncode == 1
    assert "core.hooksPath is relative (.hooks)" in refused.stderr
    assert "hook pre-commit || exit $?" in refused.stderr
    assert not (project / ".hooks").exists()


def test_setting_up_a_host_that_is_not_installed_says_so(
    home: Path, project: Path, workdir: Path
) -> None:
    """Found in review (issue 47 item 11): `coord setup cursor` with no Cursor here wrote
    its files in silence. It still writes them (Cursor may be installed next), and says
    the host was not found."""
    git_only = workdir / "bin"
    git_only.mkdir()
    (git_only / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    env = coord_env(workdir / "s.sock", HOME=str(home), XDG_STATE_HOME=str(home / ".state"))
    env["PATH"] = str(git_only)

    def setup(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [COORD, "setup", *args], capture_output=True, text=True, env=env, cwd=project,
            timeout=60, check=False,
        )  # fmt: skip

    note = (
        "coord setup cursor: note: cursor is not installed here (no ~/.cursor, no `cursor`"
        " on PATH); these settings take effect once it is installed\n"
    )
    dry = setup("cursor", "--dry-run")
    assert dry.returncode == 0 and dry.stderr == note
    done = setup("cursor")
    assert done.returncode == 0 and done.stderr == note
    assert (home / ".cursor" / "mcp.json").exists()
    # Installed now (its directory is there): nothing more to say.
    again = setup("cursor", "--remove")
    assert again.returncode == 0 and again.stderr == ""

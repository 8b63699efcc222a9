"""One board, provably (issue 43): every surface of one user reaches the same board, whatever
environment its host gives it, or refuses loudly; it never starts a second one in silence.

The matrix: the user's own environment with each of `$XDG_RUNTIME_DIR`,
`$XDG_STATE_HOME` and `$TMPDIR` set to a custom directory or unset (8
combinations); the user's daemon started in it as `make run` does (`coordd
serve`, no flags); then each surface (`coord` in a shell, a pre-edit hook,
`coord mcp`) in the environment each host gives its children (HOSTS.md):
Codex's MCP servers get `HOME`, `LANG`, `PATH` and `TERM` only; the MCP
Inspector `HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM` and `USER`; Cursor a
curated list; a login shell resets `PATH`; cron and a systemd user service
give no session variables (systemd its own `$XDG_RUNTIME_DIR`). Each must
reach the one board: the same board id, a reservation on it denies the edit,
its task is found by id, and no second daemon process appears.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from mcp import Client as MCPClient
from mcp.client.stdio import StdioServerParameters

from coordd_wire.rendezvous import live_daemons, users_board
from support import (
    CALLER_VARS,
    COORD,
    SHARED_TMP_SOCKET,
    daemon_pids,
    git_repo,
    serve_by_default,
    stop_pid,
)

pytestmark = SHARED_TMP_SOCKET

#: Which of the three variables the user set to a directory of their own (else unset).
COMBINATIONS: list[tuple[bool, bool, bool]] = [
    (runtime, state, tmp) for runtime, state, tmp in itertools.product((True, False), repeat=3)
]
#: Seconds a daemon has to start and announce itself (two Python start-ups, a loaded machine).
START_BOUND_S = 90.0
#: The variables each host passes on (the rest of the user's environment is dropped).
HOST_KEEPS = {
    "codex-mcp": ("HOME", "LANG", "PATH", "TERM"),
    "inspector": ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"),
    "cursor": ("HOME", "LOGNAME", "PATH", "SHELL", "USER", "LANG"),
    "cron": ("HOME", "LOGNAME", "SHELL"),
    "systemd-user": ("HOME", "LOGNAME", "USER", "LANG", "PATH"),
}
HOSTS = ("shell", "login-shell", *HOST_KEEPS)
UID = os.getuid()


def combination_id(combination: tuple[bool, ...]) -> str:
    names = ("runtime", "state", "tmp")
    return "-".join(
        f"{n}={'custom' if custom else 'unset'}"
        for n, custom in zip(names, combination, strict=True)
    )


class User:
    """One user's home and environment, in a directory of the test's own."""

    def __init__(self, root: Path, runtime: bool, state: bool, tmp: bool) -> None:
        self.root = root
        self.home = root / "home"
        self.home.mkdir(mode=0o700)
        base = {k: v for k, v in os.environ.items() if not k.startswith(CALLER_VARS)}
        for name in ("COORDD_SOCKET", "COORDD_DB", "COORDD_STORE", "XDG_RUNTIME_DIR"):
            base.pop(name, None)
        for name in ("XDG_STATE_HOME", "TMPDIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
            base.pop(name, None)
        base.update(HOME=str(self.home), LANG="C.UTF-8", TERM="xterm", USER="u", LOGNAME="u")
        base.setdefault("SHELL", "/bin/sh")
        for name, custom in (("XDG_RUNTIME_DIR", runtime), ("XDG_STATE_HOME", state)):
            if custom:
                directory = root / name.lower()
                directory.mkdir(mode=0o700)
                base[name] = str(directory)
        if tmp:
            (root / "tmp").mkdir()
            base["TMPDIR"] = str(root / "tmp")
        self.env = base
        self.repo = git_repo(root / "repo")
        #: Daemons this test started itself (waited for at the end).
        self.started: list[subprocess.Popen[bytes]] = []

    def host_env(self, host: str) -> dict[str, str]:
        """The environment `host` gives a child of the user's session."""
        if host == "shell":
            return dict(self.env)
        if host == "login-shell":  # a login profile that resets PATH: coord by absolute path
            return {**self.env, "PATH": "/usr/bin:/bin"}
        kept = {k: self.env[k] for k in HOST_KEEPS[host] if k in self.env}
        if host == "cron":
            kept["PATH"] = "/usr/bin:/bin"
        if host == "systemd-user":  # pam_systemd's runtime dir, whatever the user's dotfiles say
            kept["XDG_RUNTIME_DIR"] = f"/run/user/{UID}"
        if "PYTHONPATH" in self.env:  # the code under test (a worktree's), not a session's
            kept["PYTHONPATH"] = self.env["PYTHONPATH"]
        return kept

    def coord(
        self,
        *args: str,
        host: str = "shell",
        stdin: str | None = None,
        env: dict[str, str] | None = None,
    ) -> Any:
        return subprocess.run(
            [COORD, *args],
            capture_output=True,
            text=True,
            timeout=90,
            env={**self.host_env(host), **(env or {})},
            cwd=self.repo,
            input=stdin,
            check=False,
        )

    def side_by_side(self, *calls: tuple[str, tuple[str, ...], str | None]) -> list[Any]:
        """Each `(host, args, stdin)` as a `coord` process, all at once (they wait on the
        daemon and on their own start more than on each other); their results in order."""
        running = [
            subprocess.Popen(
                [COORD, *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=self.host_env(host),
                cwd=self.repo,
            )
            for host, args, _ in calls
        ]
        results = []
        for process, (host, args, stdin) in zip(running, calls, strict=True):
            out, err = process.communicate(stdin, timeout=START_BOUND_S)
            results.append(subprocess.CompletedProcess([host, *args], process.returncode, out, err))
        return results

    def boards_of(self, hosts: tuple[str, ...]) -> dict[str, str]:
        """The board id `coord whoami` reaches from each host's environment."""
        boards = {}
        for answer in self.side_by_side(*((h, ("whoami", "--json"), None) for h in hosts)):
            host = answer.args[0]
            assert answer.returncode == 0, (host, answer.stderr)
            board = json.loads(answer.stdout)["board"]
            assert board["board_id"], (host, board)
            boards[host] = str(board["board_id"])
        return boards

    def board_of(self, host: str) -> str:
        return self.boards_of((host,))[host]

    def daemons(self) -> list[int]:
        """Pids of every `coordd serve` process whose home is this user's."""
        return daemon_pids(self.home)


def wait_for_announcement(user: User, count: int = 1) -> None:
    """Until `count` daemons of the user are announced (the rendezvous is written once the
    socket is bound): the event a starting daemon gives, not a guess at its start time."""
    deadline = time.monotonic() + START_BOUND_S
    while len(live_daemons(user.env)) < count:
        assert time.monotonic() < deadline, "the daemon never announced itself"
        time.sleep(0.05)


def nothing_on_the_shared_tmp_socket() -> None:
    """With `$TMPDIR` unset, section 1 leads to /tmp/coordd-<uid>: another daemon there
    (a developer's own) would be the very split these tests look for."""
    shared = Path(f"/tmp/coordd-{UID}/coordd.sock")
    assert not daemon_answering(shared), f"a daemon already serves {shared}: stop it first"


def daemon_answering(path: Path) -> bool:
    from coordd_client.discovery import answers

    return answers(path)


@pytest.fixture
def user(request: pytest.FixtureRequest, workdir: Path) -> Iterator[User]:
    runtime, state, tmp = request.param
    nothing_on_the_shared_tmp_socket()
    made = User(workdir, runtime, state, tmp)
    yield made
    for pid in made.daemons():  # those it started, and any a client started
        stop_pid(pid, made.started)
    for process in made.started:
        process.wait(60)


def serve_as_make_run(user: User) -> subprocess.Popen[bytes]:
    process = serve_by_default(user.env, user.root / "daemon.log")
    user.started.append(process)
    wait_for_announcement(user)
    return process


def pre_edit_stdin(user: User, session: str) -> str:
    fixture = Path(__file__).parent.parent / "fixtures" / "hooks" / "claude-pre-edit.json"
    text = fixture.read_text().replace("SESSION", session)
    text = text.replace('"CWD"', json.dumps(str(user.repo)))
    return text.replace('"FILE"', json.dumps(str(user.repo / "src" / "owned.py")))


async def mcp_task_title(user: User, host: str, task_id: int) -> str:
    """`get_task` through `coord mcp` started with `host`'s environment."""
    env = user.host_env(host)
    params = StdioServerParameters(command=COORD, args=["mcp"], env=env, cwd=str(user.repo))
    with trio.fail_after(START_BOUND_S):
        async with MCPClient(params) as client:
            result = await client.call_tool("get_task", {"id": task_id})
    assert not result.is_error, (host, result.content)
    assert result.structured_content is not None
    return str(result.structured_content["task"]["title"])


@pytest.mark.parametrize("user", COMBINATIONS, ids=map(combination_id, COMBINATIONS), indirect=True)
async def test_every_surface_reaches_the_one_board(user: User) -> None:
    serve_as_make_run(user)
    (board,) = {record.board_id for record in live_daemons(user.env)}
    posted = json.loads(user.coord("post", "the one board's task", "--json").stdout)["task"]
    reserved = user.coord("reserve", "src/owned.py", "--agent", "the-human")
    assert reserved.returncode == 0, reserved.stderr

    assert user.boards_of(HOSTS) == {host: board for host in HOSTS}
    # A hook: the reservation on the one board denies the edit from every environment.
    hook_hosts = ("codex-mcp", "cron")
    edits = [
        (
            host,
            ("hook", "pre-edit", "--host", "claude"),
            pre_edit_stdin(user, f"{n:08x}-4380-4f6e-9a1b-0123456789ab"),
        )
        for n, host in enumerate(hook_hosts)
    ]
    for denied in user.side_by_side(*edits):
        host = denied.args[0]
        assert denied.returncode == 0, (host, denied.stderr)
        decision = json.loads(denied.stdout)["hookSpecificOutput"]
        assert decision["permissionDecision"] == "deny", (host, decision)
        assert "the-human" in decision["permissionDecisionReason"], host
    # An MCP server as Codex starts one: the task is found on the one board.
    assert await mcp_task_title(user, "codex-mcp", posted["id"]) == "the one board's task"
    assert len(user.daemons()) == 1, "a second daemon was started"
    assert len(live_daemons(user.env)) == 1


ALL_CUSTOM = [(True, True, True)]


@pytest.mark.parametrize("user", ALL_CUSTOM, ids=["all-custom"], indirect=True)
async def test_the_inspector_and_cursor_mcp_servers_reach_it_too(user: User) -> None:
    serve_as_make_run(user)
    posted = json.loads(user.coord("post", "seen by every MCP host", "--json").stdout)["task"]
    for host in ("inspector", "cursor", "cron"):
        assert await mcp_task_title(user, host, posted["id"]) == "seen by every MCP host"
    assert len(user.daemons()) == 1


@pytest.mark.parametrize("user", ALL_CUSTOM, ids=["all-custom"], indirect=True)
def test_a_stripped_environment_starts_the_users_board_not_a_new_one(user: User) -> None:
    """Before: Codex's MCP server, first to run, started a fresh board in
    ~/.local/state/coordd beside the user's own in `$XDG_STATE_HOME`."""
    first = serve_as_make_run(user)
    (board,) = {record.board_id for record in live_daemons(user.env)}
    user.coord("post", "yesterday's work")
    recorded = users_board(user.env)
    assert recorded is not None and recorded.board_id == board
    stop_pid(first.pid, user.started)
    assert not live_daemons(user.env)

    listed = user.coord("ls", "--json", host="codex-mcp")  # starts a daemon: the user's board
    assert listed.returncode == 0, listed.stderr
    assert [t["title"] for t in json.loads(listed.stdout)["tasks"]] == ["yesterday's work"]
    assert user.board_of("codex-mcp") == board == user.board_of("shell")
    assert not (user.home / ".local" / "state" / "coordd" / "coord.db").exists()
    assert len(user.daemons()) == 1


def serve_separately(user: User, name: str) -> subprocess.Popen[bytes]:
    """A board of the user's started on purpose beside theirs: its own file and socket."""
    process = subprocess.Popen(
        [str(Path(COORD).with_name("coordd")), "serve", "--db", str(user.root / f"{name}.db"),
         "--socket", str(user.root / f"{name}.sock")],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env=user.env,
    )  # fmt: skip
    user.started.append(process)
    return process


@pytest.mark.parametrize("user", ALL_CUSTOM, ids=["all-custom"], indirect=True)
def test_with_a_separate_board_live_surfaces_take_the_users_even_unrecorded(
    user: User,
) -> None:
    """A second board started on purpose (its own --db and --socket) does not split the
    surfaces: they take the user's board, even with no record of it (a separate board is
    never the user's). A second *default* daemon is refused. (Two boards of the user's
    and nothing to say which: `test_unreachable_board`'s refusal.)"""
    serve_as_make_run(user)
    (mine,) = {record.board_id for record in live_daemons(user.env)}
    serve_separately(user, "other")
    wait_for_announcement(user, 2)
    boards = {record.board_id for record in live_daemons(user.env)}
    assert len(boards) == 2
    assert user.boards_of(("shell", "codex-mcp", "cron")) == dict.fromkeys(
        ("shell", "codex-mcp", "cron"), mine
    )
    # Another default daemon (another state directory, as a host's environment gives it):
    elsewhere = {**user.env, "XDG_STATE_HOME": str(user.root / "elsewhere")}
    refused = subprocess.run(
        [str(Path(COORD).with_name("coordd")), "serve"],
        capture_output=True, text=True, timeout=90, env=elsewhere, check=False,
    )  # fmt: skip
    assert refused.returncode == 1 and "another of your boards is live" in refused.stderr
    assert mine in refused.stderr
    # Nothing records the user's board: the separate one is still not taken for it.
    (user.home / ".local" / "state" / "coordd" / "board").unlink()
    assert user.boards_of(("shell", "codex-mcp")) == dict.fromkeys(("shell", "codex-mcp"), mine)
    # Asked for by its socket, either board is served: the user said which one.
    assert user.coord("--socket", str(user.root / "other.sock"), "ls").returncode == 0
    assert sorted(user.daemons()) == sorted(live_pids(user)) and len(user.daemons()) == 2


@pytest.mark.parametrize("user", ALL_CUSTOM, ids=["all-custom"], indirect=True)
def test_a_board_started_on_purpose_never_captures_the_users_surfaces(user: User) -> None:
    """The user's board is down and a separate one is live: a surface is not captured by
    it. Without autostart it says the user's board is not running; with it, it starts
    the user's board."""
    first = serve_as_make_run(user)
    (mine,) = {record.board_id for record in live_daemons(user.env)}
    stop_pid(first.pid, user.started)
    serve_separately(user, "scratch")
    wait_for_announcement(user, 1)
    down = user.coord("ls", host="codex-mcp", env={"COORD_NO_AUTOSTART": "1"})
    assert down.returncode != 0 and f"your board {mine} is not running" in down.stderr, down
    assert user.coord("ls", host="codex-mcp").returncode == 0  # starts the user's board
    assert user.board_of("codex-mcp") == mine == user.board_of("shell")
    assert len(user.daemons()) == 2


@pytest.mark.parametrize("user", ALL_CUSTOM, ids=["all-custom"], indirect=True)
def test_two_first_calls_from_two_environments_start_one_board_and_both_use_it(
    user: User,
) -> None:
    """Before (the review's find): the loser of the start-up race, in another environment,
    derived another socket, found the database held there, and failed."""
    first = serve_as_make_run(user)
    (mine,) = {record.board_id for record in live_daemons(user.env)}
    stop_pid(first.pid, user.started)
    both = user.side_by_side(("shell", ("ls",), None), ("codex-mcp", ("ls",), None))
    assert [done.returncode for done in both] == [0, 0], [done.stderr for done in both]
    assert user.boards_of(("shell", "codex-mcp")) == {"shell": mine, "codex-mcp": mine}
    assert len(user.daemons()) == 1


def live_pids(user: User) -> list[int]:
    return [record.pid for record in live_daemons(user.env)]


@pytest.mark.parametrize("user", ALL_CUSTOM, ids=["all-custom"], indirect=True)
def test_a_tab_that_reaches_another_board_is_refused_in_its_own_words(user: User) -> None:
    """A tab's first session start records its board; a surface of the tab that later
    reaches another board denies the edit, and `coord` in its shell exits non-zero."""
    from support import FakeHost

    first = serve_as_make_run(user)
    session = "3cda0b49-4380-4f6e-8b5a-9f0e1d2c3b4a"
    fixture = Path(__file__).parent.parent / "fixtures" / "hooks" / "claude-session-start.json"
    start = fixture.read_text().replace('"CWD"', json.dumps(str(user.repo)))
    with FakeHost() as tab:
        env = user.host_env("shell")
        begun = tab.run([COORD, "hook", "session-start", "--host", "claude"], env=env, stdin=start)
        assert begun.returncode == 0, begun.stderr
        assert tab.run([COORD, "ls"], env=env, cwd=user.repo).returncode == 0
        # The board goes away; another one is started on the same socket (a user's
        # `rm coord.db`, a restore of another file...).
        stop_pid(first.pid, user.started)
        (Path(user.env["XDG_STATE_HOME"]) / "coordd" / "coord.db").rename(user.root / "moved.db")
        (user.home / ".local" / "state" / "coordd" / "board").unlink()
        serve_as_make_run(user)
        refused = tab.run([COORD, "ls"], env=env, cwd=user.repo)
        assert refused.returncode != 0 and "works on board" in refused.stderr, refused.stderr
        edit = pre_edit_stdin(user, session)
        denied = tab.run([COORD, "hook", "pre-edit", "--host", "claude"], env=env, stdin=edit)
        decision = json.loads(denied.stdout)["hookSpecificOutput"]
        assert decision["permissionDecision"] == "deny", decision
        assert "works on board" in decision["permissionDecisionReason"]


@pytest.mark.parametrize("user", ALL_CUSTOM, ids=["all-custom"], indirect=True)
def test_a_tab_keeps_to_its_board_when_another_is_live(user: User) -> None:
    """Before (the review's find): with a second board live, every derived surface was
    refused and the pre-edit hook let edits through unchecked. A tab's recorded board
    says which one it means: its hooks, even in a stripped environment, reach it."""
    from support import FakeHost

    serve_as_make_run(user)
    (mine,) = {record.board_id for record in live_daemons(user.env)}
    assert user.coord("reserve", "src/owned.py", "--agent", "the-human").returncode == 0
    session = "3cda0b49-4380-4f6e-8b5a-9f0e1d2c3b4a"
    fixture = Path(__file__).parent.parent / "fixtures" / "hooks" / "claude-session-start.json"
    start = fixture.read_text().replace('"CWD"', json.dumps(str(user.repo)))
    with FakeHost() as tab:
        begun = tab.run(
            [COORD, "hook", "session-start", "--host", "claude"], env=user.env, stdin=start
        )
        assert begun.returncode == 0, begun.stderr
        serve_separately(user, "other")
        wait_for_announcement(user, 2)
        (user.home / ".local" / "state" / "coordd" / "board").unlink()  # only the tab says
        edit = pre_edit_stdin(user, session)
        for host in ("shell", "codex-mcp"):
            denied = tab.run(
                [COORD, "hook", "pre-edit", "--host", "claude"],
                env=user.host_env(host),
                stdin=edit,
            )
            decision = json.loads(denied.stdout)["hookSpecificOutput"]
            assert decision["permissionDecision"] == "deny", (host, decision)
            assert "the-human" in decision["permissionDecisionReason"], (host, decision)
    assert mine in {record.board_id for record in live_daemons(user.env)}


#: Rounds of the first-start race: each a new user with no board yet.
FIRST_START_ROUNDS = 20


def test_two_first_calls_with_no_board_yet_start_one_daemon_and_lose_nothing(
    workdir: Path,
) -> None:
    """No board recorded, no daemon: a shell with its own `$XDG_*` and `$TMPDIR` and a
    stripped host environment (Codex's MCP servers: another socket, another default
    database) each post a task at one instant. One daemon starts, on one store, and
    both acknowledged posts are on the board both environments reach, every round.
    Before: in 8 rounds of 20 two daemons started, each on its own database, and a
    post could land on the orphan board."""
    nothing_on_the_shared_tmp_socket()
    for round_ in range(FIRST_START_ROUNDS):
        root = workdir / f"round-{round_}"
        root.mkdir()
        user = User(root, runtime=True, state=True, tmp=True)
        try:
            posts = user.side_by_side(
                ("shell", ("post", "from the shell", "--json"), None),
                ("codex-mcp", ("post", "from codex", "--json"), None),
            )
            assert [p.returncode for p in posts] == [0, 0], (round_, [p.stderr for p in posts])
            ids = {json.loads(p.stdout)["task"]["id"] for p in posts}
            assert len(ids) == 2, (round_, ids)
            assert len(user.daemons()) == 1, (round_, user.daemons())
            for host in ("shell", "codex-mcp"):
                listed = user.coord("ls", "--json", host=host)
                assert listed.returncode == 0, (round_, host, listed.stderr)
                seen = {task["id"] for task in json.loads(listed.stdout)["tasks"]}
                assert ids <= seen, (round_, host, ids, seen)
        finally:
            for pid in user.daemons():
                stop_pid(pid)

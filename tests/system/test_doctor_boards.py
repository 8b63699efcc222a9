"""`coord doctor`'s boards section (issue 43) against real daemons: each host's MCP server
is started as the host starts it (here Codex's, from the config `coord setup codex`
writes, in exactly Codex's environment) and asked which board it reaches; every live
daemon of the user is named; two live boards are one problem with one command.

No host binary is needed (PATH holds coord and the system only, so the Claude Code
and Codex sections skip); tests/hosts drives the real Codex.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coordd_client import Client
from coordd_wire.rendezvous import live_daemons, rendezvous_dir
from support import COORD, SHARED_TMP_SOCKET, DaemonProcess, git_repo

pytestmark = SHARED_TMP_SOCKET

#: The doctor starts a few MCP servers (each imports the SDK: a second or more, loaded).
DOCTOR_TIMEOUT_S = 180


class User:
    """One user's machine: a home, custom XDG directories and TMPDIR, as in issue 43."""

    def __init__(self, workdir: Path, home: Path) -> None:
        self.home = home
        self.run, self.state, self.tmp = workdir / "run", workdir / "state", workdir / "tmp"
        for directory in (self.run, self.state, self.tmp):
            directory.mkdir(mode=0o700)
        keep = {k: v for k, v in os.environ.items() if not k.startswith(("COORD", "XDG_"))}
        self.env = {
            **{k: v for k, v in keep.items() if not k.startswith(("CLAUDE", "CODEX"))},
            "HOME": str(home),
            "XDG_RUNTIME_DIR": str(self.run),
            "XDG_STATE_HOME": str(self.state),
            "TMPDIR": str(self.tmp),
            "PATH": os.pathsep.join([os.path.dirname(COORD), "/usr/bin", "/bin"]),
        }
        self.env.pop("PYTHONPATH", None)  # a host passes none: the venv's own code runs
        self.daemons: list[DaemonProcess] = []

    def daemon(self, workdir: Path) -> DaemonProcess:
        """The user's daemon, where the user's shell derives it."""
        return self._start(
            DaemonProcess(
                workdir,
                db_path=self.state / "coordd" / "coord.db",
                socket_path=self.run / "coordd" / "coordd.sock",
                env=self.env,
            )
        )

    def phantom(self, workdir: Path) -> DaemonProcess:
        """What a Codex MCP server with a stripped environment started before first starts
        were one at a time: a daemon on the socket its environment derives ($TMPDIR's), on
        a fresh board under HOME. Started here with its own --db and --socket, it is a
        separate board; its record is made the user's, as an older daemon's record (no
        `separate`) counts: a split."""
        phantom = self._start(
            DaemonProcess(
                workdir,
                db_path=self.home / ".local" / "state" / "coordd" / "coord.db",
                socket_path=self.tmp / f"coordd-{os.getuid()}" / "coordd.sock",
                env=self.env,
            )
        )
        for path in rendezvous_dir(self.env).glob(f"{phantom.pid}.json"):
            record = json.loads(path.read_text())
            record.pop("separate", None)
            path.write_text(json.dumps(record))
        return phantom

    def _start(self, daemon: DaemonProcess) -> DaemonProcess:
        self.daemons.append(daemon)
        return daemon.start()

    def coord(self, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [COORD, *args], cwd=cwd, env=self.env, capture_output=True, text=True,
            timeout=DOCTOR_TIMEOUT_S, check=False,
        )  # fmt: skip

    def doctor(self, cwd: Path) -> dict[str, Any]:
        done = self.coord("doctor", "--json", cwd=cwd)
        document: dict[str, Any] = json.loads(done.stdout)
        assert done.returncode == (0 if document["ok"] else 1), done.stderr
        return document

    def old_codex_setup(self) -> None:
        """A Codex table from before `env_vars`: the server gets Codex's short list only."""
        config = self.home / ".codex" / "config.toml"
        config.parent.mkdir(exist_ok=True)
        config.write_text(f'[mcp_servers.coord]\ncommand = "{COORD}"\nargs = ["mcp"]\n')


def board_of(daemon: DaemonProcess) -> str:
    with Client(daemon.socket_path) as client:
        board = client.server_info().board_id
    assert board is not None
    return board


def boards_checks(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["check"]: c for c in document["checks"] if c["section"] == "boards"}


@pytest.fixture
def user(workdir: Path, private_home: Path) -> Iterator[User]:
    made = User(workdir, private_home)
    yield made
    for daemon in made.daemons:
        daemon.ensure_dead()


def test_codex_s_server_in_codex_s_environment_reaches_the_shells_board(
    user: User, workdir: Path
) -> None:
    daemon = user.daemon(workdir)
    board = board_of(daemon)
    assert user.coord("setup", "codex", cwd=workdir).returncode == 0
    document = user.doctor(workdir)
    codex = boards_checks(document)["codex mcp server"]
    assert codex["status"] == "ok", codex
    assert codex["board_id"] == board and f"reaches board {board}" in codex["detail"]
    # Exactly Codex's environment: its default list and the env_vars setup wrote.
    assert "XDG_STATE_HOME" in codex["env"] and "COORDD_SOCKET" not in codex["env"]
    assert "PYTHONPATH" not in codex["env"] and "SSH_AUTH_SOCK" not in codex["env"]
    (live,) = [c for c in boards_checks(document).values() if c["check"].startswith("daemon ")]
    assert live["pid"] == daemon.pid and live["board_id"] == board
    assert document["checks"][0]["board_id"] == board  # the shell's daemon, with its board
    # An older setup (no env_vars) still reaches it: the rendezvous, not the environment.
    user.old_codex_setup()
    again = boards_checks(user.doctor(workdir))["codex mcp server"]
    assert again["status"] == "ok" and again["board_id"] == board, again
    assert "XDG_RUNTIME_DIR" not in again["env"]


def test_two_live_boards_are_one_problem_naming_both_and_the_command(
    user: User, workdir: Path
) -> None:
    repo = git_repo(workdir / "repo")
    subprocess.run(
        ["git", "-C", str(repo), "worktree", "add", "-q", "-b", "side", str(workdir / "side")],
        check=True, capture_output=True,
    )  # fmt: skip
    daemon = user.daemon(workdir)
    phantom = user.phantom(workdir)
    user.old_codex_setup()
    document = user.doctor(repo)
    assert not document["ok"]
    checks = boards_checks(document)
    split = checks["split"]
    assert split["fix"] == f"kill {phantom.pid}", split  # the daemon no surface should use
    assert split["keep"] == board_of(daemon)  # the board this shell reaches
    for process in (daemon, phantom):
        assert f"pid {process.pid}" in split["detail"]
        assert str(process.socket_path) in split["detail"]
    assert str(phantom.db_path) in split["detail"]  # its store, named
    # Codex's server (no env_vars) derives the phantom's socket; with two boards live it
    # takes the one recorded as the user's (the shell's daemon, on its default paths),
    # not the phantom answering on the socket it derives: no second cause.
    codex = checks["codex mcp server"]
    assert codex["status"] == "ok" and codex["board_id"] == board_of(daemon), codex
    # One cause, one finding and one command, in a repository of two worktrees.
    assert [c["check"] for c in document["checks"]].count("split") == 1
    assert document["fixes"].count(split["fix"]) == 1
    reduced = next(c for c in document["checks"] if c["check"] == "reduced environment")
    assert reduced["pid"] == phantom.pid and reduced["status"] == "note", reduced

    # The command ends the split.
    subprocess.run(shlex.split(split["fix"]), check=True)
    assert phantom.proc is not None
    phantom.proc.wait(timeout=30)
    after = user.doctor(repo)
    assert "split" not in boards_checks(after)
    assert boards_checks(after)["codex mcp server"]["board_id"] == board_of(daemon)


def test_the_probe_never_starts_a_daemon(user: User, workdir: Path) -> None:
    assert user.coord("setup", "codex", cwd=workdir).returncode == 0
    document = user.doctor(workdir)  # autostart is on in this environment
    codex = boards_checks(document)["codex mcp server"]
    assert "would start a daemon on" in codex["detail"], codex
    assert str(user.run / "coordd" / "coordd.sock") in codex["detail"]
    assert codex["would_start"] == str(user.state / "coordd" / "coord.db")
    assert live_daemons(user.env) == []
    assert not (user.run / "coordd" / "coordd.sock").exists()

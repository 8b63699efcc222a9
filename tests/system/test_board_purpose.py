"""Which live board is the user's: a board started on purpose beside it never is, and the
user's board stays findable when its state folder is removed while it runs.

Real daemons, real clients in the environment each host gives them (`test_one_board`'s
`User`): a board started with its own `--db` and `--socket` captures no surface, does
not keep the user's own `coordd serve` from starting, and `coord doctor` lists it as
separate. A removed `~/.local/state/coordd` is written again by the daemon, and a
client with a stripped environment never starts a second, empty board meanwhile.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_one_board import (
    START_BOUND_S,
    User,
    nothing_on_the_shared_tmp_socket,
    serve_as_make_run,
    serve_separately,
    wait_for_announcement,
)

from coordd_wire.rendezvous import live_daemons, users_board
from support import COORD, SHARED_TMP_SOCKET, stop_pid

pytestmark = SHARED_TMP_SOCKET
DOCTOR_TIMEOUT_S = 180


@pytest.fixture
def user(workdir: Path) -> Iterator[User]:
    """A user with `$XDG_RUNTIME_DIR`, `$XDG_STATE_HOME` and `$TMPDIR` of their own."""
    nothing_on_the_shared_tmp_socket()
    made = User(workdir, runtime=True, state=True, tmp=True)
    yield made
    for pid in made.daemons():
        stop_pid(pid, made.started)
    for process in made.started:
        process.wait(60)


def boards_checks(user: User) -> dict[str, dict[str, Any]]:
    done = subprocess.run(
        [COORD, "doctor", "--json"], cwd=user.repo, env=user.env, capture_output=True,
        text=True, timeout=DOCTOR_TIMEOUT_S, check=False,
    )  # fmt: skip
    document = json.loads(done.stdout)
    return {c["check"]: c for c in document["checks"] if c["section"] == "boards"}


def state_folder(user: User) -> Path:
    return user.home / ".local" / "state" / "coordd"


def test_a_separate_board_alone_captures_no_surface_and_blocks_no_users_board(
    user: User,
) -> None:
    """Before: the only live board, it was every default surface's; the user's own
    `coordd serve` was refused beside it; doctor marked it FAIL with `kill <pid>`."""
    scratch_process = serve_separately(user, "scratch")
    wait_for_announcement(user)
    (scratch,) = live_daemons(user.env)
    assert scratch.pid == scratch_process.pid

    # A surface that may not start a daemon refuses loudly, naming the separate board.
    down = user.coord("ls", host="codex-mcp", env={"COORD_NO_AUTOSTART": "1"})
    assert down.returncode != 0, down.stdout
    assert "your board is not running" in down.stderr and scratch.board_id in down.stderr

    # The user's own daemon starts beside it (not refused), and every surface takes it.
    serve_as_make_run(user)
    wait_for_announcement(user, 2)
    (mine,) = {r.board_id for r in live_daemons(user.env) if not r.separate}
    assert mine != scratch.board_id
    assert user.boards_of(("shell", "codex-mcp", "cron")) == dict.fromkeys(
        ("shell", "codex-mcp", "cron"), mine
    )
    # Given its socket, the separate board is served: it was asked for.
    asked = user.coord("--socket", scratch.socket, "whoami", "--json")
    assert json.loads(asked.stdout)["board"]["board_id"] == scratch.board_id, asked.stderr

    assert [r.separate for r in live_daemons(user.env) if r.pid == scratch.pid] == [True]
    checks = boards_checks(user)
    assert "split" not in checks, checks["split"]
    note = checks[f"daemon {scratch.pid}"]
    assert note["status"] == "note" and note["separate"] is True, note
    assert "separate board" in note["detail"]
    assert len(user.daemons()) == 2


def test_a_removed_state_folder_is_written_again_and_the_board_stays_the_users(
    user: User,
) -> None:
    """Before: after `rm -rf ~/.local/state/coordd`, a stripped environment's next call
    started a second, empty board and answered "no open tasks"."""
    daemon = serve_as_make_run(user)
    posted = user.coord("post", "posted a minute earlier")
    assert posted.returncode == 0, posted.stderr
    (record,) = live_daemons(user.env)
    board = users_board(user.env)
    assert board is not None

    shutil.rmtree(state_folder(user))
    deadline = time.monotonic() + START_BOUND_S
    while live_daemons(user.env) != [record] or users_board(user.env) != board:
        assert time.monotonic() < deadline, "the daemon never wrote its records again"
        time.sleep(0.05)

    listed = user.coord("ls", "--json", host="codex-mcp")
    assert listed.returncode == 0, listed.stderr
    titles = [task["title"] for task in json.loads(listed.stdout)["tasks"]]
    assert titles == ["posted a minute earlier"], user.daemons()
    assert user.daemons() == [daemon.pid], "a second daemon was started"


def test_a_daemon_with_no_record_is_waited_for_never_doubled(user: User) -> None:
    """The window before the daemon writes its record again, held open: its record
    cannot be written (the rendezvous is a file, not a folder). A stripped environment
    finds the user's daemon running with no record and refuses, naming it, rather than
    start a second, empty board. Before: it started one and answered from it."""
    daemon = serve_as_make_run(user)
    assert user.coord("post", "the one board's task").returncode == 0
    shutil.rmtree(state_folder(user))
    state_folder(user).mkdir(mode=0o700)
    (state_folder(user) / "daemons").write_text("not a folder\n")

    refused = user.coord("ls", host="codex-mcp")
    assert refused.returncode != 0, refused.stdout
    assert f"coordd (pid {daemon.pid}) runs as you with no record" in refused.stderr, refused.stderr
    assert "--socket" in refused.stderr
    assert user.daemons() == [daemon.pid], "a second daemon was started"

    checks = boards_checks(user)
    assert checks["rendezvous"]["status"] == "missing", checks
    assert "removed while the daemon runs" in checks["rendezvous"]["detail"]

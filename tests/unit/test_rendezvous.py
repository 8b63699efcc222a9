"""The rendezvous's own rules (docs/PROTOCOL-1.2.md section 1a): where it is, whatever the
environment says, and which records count as live."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

from coordd_wire.rendezvous import (
    LiveDaemon,
    UsersBoard,
    announce,
    home_directory,
    live_daemons,
    process_started,
    record_users_board,
    rendezvous_dir,
    users_board,
)


def test_it_depends_on_the_home_directory_alone(tmp_path: Path) -> None:
    home = {"HOME": str(tmp_path)}
    decoys = {"XDG_STATE_HOME": "/elsewhere", "XDG_RUNTIME_DIR": "/r", "TMPDIR": "/t"}
    assert rendezvous_dir(home) == rendezvous_dir({**home, **decoys})
    assert str(rendezvous_dir(home)).startswith(str(tmp_path))
    # No usable $HOME (cron without it, a relative one): the password entry's home.
    passwd = Path(pwd.getpwuid(os.getuid()).pw_dir)
    assert home_directory({}) == passwd == home_directory({"HOME": "relative/dir"})


def test_only_live_processes_count_and_stale_records_are_removed(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    me = os.getpid()
    announce(
        LiveDaemon(pid=me, started=process_started(me), socket="/s", board_id="a", store="x"), env
    )
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    announce(LiveDaemon(pid=gone.pid, started=None, socket="/g", board_id="b", store="y"), env)
    # A live pid that started at another time is another process: a reused pid.
    reused = LiveDaemon(pid=os.getppid(), started="1", socket="/r", board_id="c", store="z")
    announce(reused, env)
    (rendezvous_dir(env) / "garbled.json").write_text("{not json")
    # A pid no process can have (the review's find: OverflowError out of every hook).
    huge = '{"pid":99999999999999999999,"started":null,"socket":"/h","board_id":"d","store":"w"}'
    (rendezvous_dir(env) / "huge.json").write_text(huge)
    assert [record.board_id for record in live_daemons(env)] == ["a"]
    left = sorted(p.name for p in rendezvous_dir(env).iterdir())
    assert left == [f"{me}.json", "garbled.json"]  # the dead, the reused, the impossible went


def test_the_users_board_is_read_back_and_nothing_is_none(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    assert users_board(env) is None
    record_users_board(UsersBoard(store="sqlite:/b.db", board_id="0123456789abcdef"), env)
    assert users_board(env) == UsersBoard(store="sqlite:/b.db", board_id="0123456789abcdef")

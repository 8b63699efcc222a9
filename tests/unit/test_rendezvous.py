"""The rendezvous's own rules (docs/PROTOCOL-1.2.md section 1a): where it is, whatever the
environment says, and which records count as live."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest

from coordd_wire.record import pid_alive
from coordd_wire.rendezvous import (
    MAX_RECORD_BYTES,
    LiveDaemon,
    UsersBoard,
    announce,
    home_directory,
    live_daemons,
    process_started,
    record_users_board,
    rendezvous_dir,
    users_board,
    users_board_path,
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


def test_only_regular_files_are_read_and_never_waited_on(tmp_path: Path) -> None:
    """A FIFO (opened for reading, it waits for a writer forever), a symlink to one, and a
    file larger than any record: skipped at once, and left where they are."""
    env = {"HOME": str(tmp_path)}
    me = os.getpid()
    announce(
        LiveDaemon(pid=me, started=process_started(me), socket="/s", board_id="a", store="x"), env
    )
    directory = rendezvous_dir(env)
    os.mkfifo(directory / "fifo.json")
    (directory / "link.json").symlink_to(directory / "fifo.json")
    (directory / "huge.json").write_bytes(b" " * (MAX_RECORD_BYTES + 1))
    assert [record.board_id for record in live_daemons(env)] == ["a"]
    # The user's board record, too.
    os.mkfifo(users_board_path(env))
    assert users_board(env) is None
    assert sorted(p.name for p in directory.iterdir()) == sorted(
        [f"{me}.json", "fifo.json", "link.json", "huge.json"]
    )


def test_a_zombie_is_no_live_daemon(tmp_path: Path) -> None:
    """A daemon that ended and was not reaped still answers `kill(pid, 0)`: its record is
    stale all the same (it refused `coordd serve` as "another of your boards is live")."""
    if not Path("/proc/self/stat").exists():
        pytest.skip("no /proc: the zombie's state cannot be read here")
    env = {"HOME": str(tmp_path)}
    child = subprocess.Popen(["sleep", "600"])
    started = process_started(child.pid)
    announce(LiveDaemon(pid=child.pid, started=started, socket="/z", board_id="z", store="z"), env)
    try:
        assert [record.board_id for record in live_daemons(env)] == ["z"]
        assert pid_alive(child.pid)
        child.kill()
        # Not reaped yet: a zombie until `wait`; its state says so once it has ended.
        while (Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]) != "Z":
            os.sched_yield()
        assert live_daemons(env) == []
        assert not pid_alive(child.pid)
        assert list(rendezvous_dir(env).iterdir()) == []
    finally:
        child.wait()

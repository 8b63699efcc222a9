"""The store is chosen once (`store/backends.py`); a team-mode stop wakes the doorbell.

An SQLite daemon is built without the team's modules: psycopg is imported by a
`postgresql://` store only.

A team-mode stop wakes the doorbell's LISTEN thread instead of waiting for it to look.

The thread used to wait on PostgreSQL in slices of `team_poll_s` and look at a
stop flag between them, so every team-mode stop waited up to a second for it.
Now `stop` writes to a socket pair the thread selects on beside the
connection; the doorbell records why its thread left, and a stop must leave
it "woken", not "stopped" (which is what a thread that only saw the flag
between two waits records).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import trio

from coordd.config import DaemonConfig
from coordd.daemon import Daemon
from coordd.store.postgres.backend import TeamMode
from postgres import create_database
from servers import PostgresPeer
from support import short_tmpdir


async def test_a_team_stop_wakes_the_listen_thread(postgres_cluster: PostgresPeer) -> None:
    root: Path = short_tmpdir("ts")
    config = DaemonConfig(
        db_path=root / "unused.db",
        socket_path=root / "t.sock",
        handle_signals=False,
        store_dsn=create_database(postgres_cluster),
        node="stopper",
    )
    daemon = Daemon(config)
    assert isinstance(daemon.store, TeamMode)
    doorbell = daemon.store.doorbell
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            await nursery.start(daemon.run)
            assert doorbell.listening.is_set()  # the thread waits on the store now
            assert doorbell.left is None
            daemon.request_stop()
    assert doorbell.left == "woken"


def test_an_sqlite_daemon_is_built_without_the_team_store(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "from coordd.config import DaemonConfig\n"
        "from coordd.daemon import Daemon\n"
        f"root = Path({str(tmp_path)!r})\n"
        "daemon = Daemon(DaemonConfig(db_path=root / 'c.db', socket_path=root / 'c.sock'))\n"
        "print(daemon.store.name, daemon.store.location == str(root / 'c.db'),"
        " *(m in sys.modules"
        "   for m in ('coordd.store.postgres.backend', 'psycopg', 'psycopg_pool')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    assert out == ["sqlite", "True", "False", "False", "False"]

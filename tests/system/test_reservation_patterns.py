"""Reservation patterns at their bounds over a real daemon (issue 29): a pattern past the
bounds is refused, one stored before them hangs nothing, thousands of live ones answer.

The rest of protocol section 10 is test_reservations.py's.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from coordd_client import Client
from support import DaemonProcess, RawConnection

pytestmark = pytest.mark.both_backends

PROJECT = "/repo"


#: Issue 29's poisoned pattern: 66 valid characters, conflicting with nobody, that held
#: pathspec's backtracking regex (and the GIL: pings, the writer, SIGTERM) for minutes.
POISON = "node_modules/" + "**/*/" * 10 + "zzz"


def test_a_pattern_over_the_bounds_is_refused_naming_patterns_and_the_limit(
    daemon: DaemonProcess,
) -> None:
    conn = RawConnection(daemon.socket_path)
    base = {"agent": "a", "project": PROJECT}
    assert "pattern_limits" in conn.call("server.info")["result"]["features"]
    try:
        for pattern, limit in [
            (POISON, "at most 4"),
            ("a/**/" * 8 + "x", "at most 4"),
            ("*a" * 17 + "*b", "at most 16"),
        ]:
            error = conn.call("reservation.acquire", {**base, "patterns": ["ok", pattern]})
            assert error["error"]["code"] == -32602, error
            assert error["error"]["data"]["field"] == "patterns"
            assert (
                limit in error["error"]["message"] and "$.patterns[1]" in error["error"]["message"]
            )
        assert conn.call("reservation.list", {})["result"] == {"reservations": []}
        # The bounds leave room for every real pattern.
        real = ["src/**/*.test.[jt]s", "**/node_modules/**", "a/**/b/**/c/**/d/**", "*" * 16]
        assert conn.call("reservation.acquire", {**base, "patterns": real})["result"]
    finally:
        conn.close()


def test_a_poisoned_pattern_stored_before_the_bounds_hangs_nothing(workdir: Path) -> None:
    """Stored by an earlier release and still live after a restart: checks of deep paths
    answer at once, pings meanwhile too, it can be released by name, SIGTERM stops it."""
    daemon = DaemonProcess(workdir).start()
    try:
        with Client(daemon.socket_path, agent="holder", project=PROJECT) as holder:
            holder.reserve(["node_modules/placeholder"])
    finally:
        daemon.stop()
    conn = sqlite3.connect(daemon.db_path)
    conn.execute("UPDATE reservations SET pattern = ?, prefix = 'node_modules/'", (POISON,))
    conn.commit()
    conn.close()
    daemon = DaemonProcess(workdir).start()
    try:
        deep = ["node_modules/" + "/".join(["d"] * depth) for depth in (30, 40, 60, 200)]
        pings: list[bool] = []
        checking = threading.Event()
        done = threading.Event()

        def ping_meanwhile() -> None:
            # A stalled loop fails a ping by the client's timeout (an exception here).
            with Client(daemon.socket_path, agent="pinger", project=PROJECT) as pinger:
                while not done.is_set():
                    pinger.ping()
                    pings.append(checking.is_set())
                    time.sleep(0.01)

        pinger = threading.Thread(target=ping_meanwhile)
        pinger.start()
        try:
            with Client(daemon.socket_path, agent="b", project=PROJECT, timeout_s=60) as b:
                checking.set()
                for _ in range(5):
                    assert b.check_paths(deep).conflicts == []
                assert b.reserve(["src/**"]).reservations
        finally:
            done.set()
            pinger.join(timeout=60)
        assert not pinger.is_alive() and pings[-1]  # pings went on to the end of the checks
        with Client(daemon.socket_path, agent="holder", project=PROJECT) as holder:
            assert holder.unreserve([POISON]).released == 1
    except BaseException:
        daemon.kill()  # a hung daemon ignores SIGTERM: do not leave it behind
        raise
    assert daemon.stop(timeout_s=10) == 0


def test_an_acquire_among_thousands_of_live_patterns_answers(daemon: DaemonProcess) -> None:
    """Past 4,096 distinct live patterns the old caches missed on every look: one
    16-pattern acquire, every live reservation a candidate, held the writer for 53 s.
    Its cost is measured in bench/patterns.py; here, that such a board still answers
    right, within the client's generous timeout, on a busy machine too."""
    with Client(daemon.socket_path, agent="filler", project=PROJECT, timeout_s=120) as filler:
        texts = [f"pkg{n}/*.py" for n in range(5000)]
        for start in range(0, len(texts), 64):
            filler.reserve(texts[start : start + 64])
    with Client(daemon.socket_path, agent="b", project=PROJECT, timeout_s=120) as b:
        # Each starts with a wildcard (every reservation is a candidate) and is disjoint
        # from all of them (a top-level `*.mN` file is under no `pkgN/` directory).
        for _ in range(2):
            assert len(b.reserve([f"*.m{n}" for n in range(16)]).reservations) == 16

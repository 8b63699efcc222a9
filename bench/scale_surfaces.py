"""What `make bench-scale` times on one board, each through a public interface, as a user
runs it: the daemon (`coordd serve`) and the CLI (`coord ...`) from this venv's console
scripts, requests on the socket, the web board over HTTP, `coord top` in a terminal.

Every function returns seconds (or a list of samples); none asserts a time.
"""

from __future__ import annotations

import fcntl
import http.cookiejar
import os
import pty
import queue
import random
import re
import select
import shlex
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from coordd_client import Client, methods
from coordd_wire.errors import CoordError

BIN = Path(sys.executable).parent
COORD = str(BIN / "coord")
COORDD = str(BIN / "coordd")
#: What `coord top`'s status line says in the frame that draws its first rows: "loading"
#: while the rest of the board is read (tui/follow.py), "live" once all of it is.
TOP_PAINTED = (b"daemon loading", b"daemon live")
_ESCAPES = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[@-_]")


def start_daemon(db: Path, socket: Path, log: Path) -> tuple[subprocess.Popen[bytes], float]:
    """`coordd serve` on `db`; returns it and the seconds from its start to its first
    answer (a ping), the figure "restart after kill -9" reports."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COORD")}
    try:
        ping(socket)
    except (CoordError, OSError):
        pass  # nobody answers there: ours will
    else:
        raise RuntimeError(f"a daemon already answers on {socket}: stop it first")
    with open(log, "ab") as out:
        started = time.perf_counter()
        proc = subprocess.Popen(
            [COORDD, "serve", "--db", str(db), "--socket", str(socket), "--log-level", "warning"],
            stdout=out,
            stderr=out,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"coordd exited with {proc.returncode} on {db}: see {log}")
        try:
            with Client(socket, timeout_s=5) as client:
                client.ping()
            return proc, time.perf_counter() - started
        except (CoordError, OSError):
            time.sleep(0.002)  # polling the socket: what a client waiting for it does
        if time.perf_counter() - started > 600:
            proc.kill()
            raise RuntimeError(f"coordd did not answer within 600 s on {db}")


def claim_next_p50(socket: Path, project: str, runs: int) -> list[float]:
    """`task.claim_next` round trips; each claimed task is completed and a new one posted
    (untimed), so the board keeps its shape."""
    samples: list[float] = []
    with Client(socket, agent="bench-claimer", project=project) as client:
        for n in range(runs):
            started = time.perf_counter()
            got = client.claim_next()
            samples.append(time.perf_counter() - started)
            assert got.task is not None, "no pending task to claim"
            client.complete(got.task.id, result="benched")
            client.post(f"bench replacement {n}", priority=-5)
    return samples


def write_beside_claims(
    socket: Path, project: str, runs: int, spread_s: float
) -> tuple[list[float], int]:
    """`task.post` round trips while another process loops `claim_next` (then completes
    and posts a replacement) on the same project; returns the posts and the claims made.

    Each post waits a random 0 to `spread_s` seconds first: back to back, the posts fall
    into step with the loop (one waits behind a `claim_next`, and the next slips in while
    the loop completes and posts), and would miss most of the wait a write arriving at
    any moment has."""
    jitter = random.Random(59)
    loop = subprocess.Popen(
        [sys.executable, "-m", "bench.scale_loop", str(socket), project],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert loop.stdout is not None and loop.stdin is not None
    try:
        assert loop.stdout.readline().strip() == "looping"
        samples: list[float] = []
        with Client(socket, agent="bench-writer", project=project) as client:
            for n in range(runs):
                time.sleep(jitter.uniform(0, spread_s))
                started = time.perf_counter()
                client.post(f"bench write {n}", priority=-5)
                samples.append(time.perf_counter() - started)
        loop.stdin.close()
        claims = int(loop.stdout.readline().strip() or 0)
    finally:
        if not loop.stdin.closed:
            loop.stdin.close()
        loop.wait(60)
        loop.stdout.close()
    return samples, claims


def run_timed(argv: Sequence[str], env: dict[str, str], cwd: Path, stdin: str = "") -> float:
    """One process, start to exit; it must succeed (a failed run is not a figure)."""
    started = time.perf_counter()
    done = subprocess.run(
        argv, input=stdin, capture_output=True, text=True, env=env, cwd=cwd, timeout=900,
        check=False,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)} exited {done.returncode}: {done.stderr[-500:]}")
    return elapsed


def export_timed(
    env: dict[str, str], cwd: Path, fmt: str, out: Path, limit_s: float
) -> float | None:
    """`coord export --format FMT -o OUT`; None when it ran past `limit_s` (stopped)."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [COORD, "export", "--format", fmt, "-o", str(out)],
        env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        _, err = proc.communicate(timeout=limit_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    if proc.returncode != 0:
        raise RuntimeError(f"coord export --format {fmt} exited {proc.returncode}: {err!r}")
    return time.perf_counter() - started


def top_first_paint(env: dict[str, str], cwd: Path, limit_s: float = 300.0) -> float | None:
    """`coord top` in a 120x40 pseudo-terminal: seconds from its start until its status
    line says its first rows are drawn ("daemon loading", or "daemon live" from a daemon
    without counts, once the whole board is read; frames are 0.2 s apart). None if it
    never did within `limit_s`."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    started = time.perf_counter()
    proc = subprocess.Popen(
        [COORD, "top"], stdin=slave, stdout=slave, stderr=slave, cwd=cwd,
        env={**env, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"},
        start_new_session=True,
    )  # fmt: skip
    os.close(slave)
    seen = b""
    try:
        while time.perf_counter() - started < limit_s:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    return None
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return None
            seen = (seen + chunk)[-65536:]
            if any(word in _ESCAPES.sub(b"", seen) for word in TOP_PAINTED):
                return time.perf_counter() - started
        return None
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
        os.close(master)


class Web:
    """`coord web` serving the board; `get()` times one GET of the board page."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [COORD, "web"], env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, start_new_session=True,
        )  # fmt: skip
        stdout = self.proc.stdout
        assert stdout is not None
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
        self.url = lines.get(timeout=120).removeprefix("coord web: ").strip()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )

    def get(self) -> float:
        """One GET of the board page. The first follows the printed URL's one-time code
        (the sign-in sets a cookie and redirects to the board), the rest get the board."""
        started = time.perf_counter()
        with self.opener.open(self.url, timeout=900) as answer:
            body = answer.read()
            assert answer.status == 200, answer.status
            self.url = answer.url
        elapsed = time.perf_counter() - started
        assert b"<title>coord web</title>" in body and b'id="rows"' in body, body[:300]
        return elapsed

    def stop(self) -> None:
        os.killpg(self.proc.pid, signal.SIGTERM)
        self.proc.wait(30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def session_start_command(repo: Path, env: dict[str, str]) -> str:
    """The SessionStart command `coord setup claude` registers (user-wide, its default:
    in the bench's own home)."""
    import json

    settings = Path(env["HOME"]) / ".claude" / "settings.json"
    if not settings.exists():
        run_timed([COORD, "setup", "claude"], env, repo)
    hooks = json.loads(settings.read_text())["hooks"]["SessionStart"]
    return str(hooks[0]["hooks"][0]["command"])


def kill_hard(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    proc.wait(120)


def ping(socket: Path) -> None:
    with Client(socket, timeout_s=30) as client:
        client.send(methods.ping())

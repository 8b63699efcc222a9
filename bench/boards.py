"""What finding the one board costs (issue 43): a hook that finds its daemon by each route.

The pre-edit hook runs before every edit of every tab, so what section 1a and 1b add to
it is what an agent pays. Three environments, each paired run for run with a bare start
of the same venv's interpreter (a ratio, as `bench/hooks.py` reports, so the machine's
load moves both halves alike):

- `explicit`: `$COORDD_SOCKET` given: the socket only, no rendezvous (as before);
- `derived`: `$XDG_RUNTIME_DIR` leads to the daemon's socket: it answers, and the
  rendezvous is read to make sure no second board is live (a directory, no round trip);
- `stripped`: Codex's MCP environment (`HOME LANG PATH TERM`): the derived socket has
  nobody, the rendezvous's live daemon is pinged, then used.

In every case the hook runs in a registered tab whose board is recorded, so it also pays
section 1b's check (one `server.info` round trip). In process, the two new steps alone:
reading the rendezvous, and that round trip, in microseconds.

`python -m bench.boards [runs]` runs this part alone.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.hooks import SESSION, _timed, coord_script, hook_command, make_world, payloads
from coordd_client import Client
from coordd_client.discovery import SocketRoute
from coordd_wire.rendezvous import LiveDaemon, announce, live_daemons

ROUTES = ("explicit", "derived", "stripped")


def _environments(root: Path, socket: Path, base: dict[str, str]) -> dict[str, dict[str, str]]:
    """Each route's environment; the derived socket is a link to the daemon's."""
    runtime = root / "run"
    (runtime / "coordd").mkdir(parents=True)
    (runtime / "coordd" / "coordd.sock").symlink_to(socket)
    (root / "tmp").mkdir()
    derived = {k: v for k, v in base.items() if k != "COORDD_SOCKET"}
    derived |= {"XDG_RUNTIME_DIR": str(runtime), "TMPDIR": str(root / "tmp")}
    kept = ("HOME", "LANG", "PATH", "TERM")
    stripped: dict[str, str] = {k: derived[k] for k in kept if k in derived}
    stripped |= {"COORD_NO_AUTOSTART": "1", "TMPDIR": str(root / "tmp")}
    return {"explicit": base, "derived": derived, "stripped": stripped}


def _announce(socket: Path, home: Path) -> None:
    """The daemon's record in the bench's home (its own is in the daemon's home)."""
    with Client(socket) as client:
        info = client.server_info()
    assert info.board_id is not None
    record = LiveDaemon(
        pid=info.pid, started=None, socket=str(socket), board_id=info.board_id, store="bench"
    )
    announce(record, {"HOME": str(home)})


def measure_board_finding(socket: Path, runs: int = 9) -> dict[str, float]:
    """p50 of the pre-edit hook by each route, and the median ratio to a bare start."""
    coord = coord_script()
    python = str(Path(coord[0]).parent / "python")
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        root = Path(tmp)
        repo, base = make_world(root, socket)
        _announce(socket, root / "home")
        environments = _environments(root, socket, base)
        stdin = payloads(repo)
        start = json.dumps({"session_id": SESSION, "cwd": str(repo), "hook_event_name": "x"})
        # One session start registers the tab (this process is its host) and its board.
        _timed(hook_command("session-start", coord), start, base, repo)
        out: dict[str, float] = {}
        pairs: dict[str, list[tuple[float, float]]] = {route: [] for route in ROUTES}
        for route in ROUTES:  # warm (bytecode, the page cache), and check it reached the board
            done = subprocess.run(
                hook_command("pre-edit", coord),
                input=stdin["pre-edit"],
                capture_output=True,
                text=True,
                env=environments[route],
                cwd=repo,
                timeout=60,
                check=False,
            )
            assert done.returncode == 0 and "could not" not in done.stdout + done.stderr, (
                route,
                done.stdout,
                done.stderr,
            )
        for _ in range(runs):
            for route in ROUTES:
                env = environments[route]
                bare = _timed([python, "-c", "pass"], "", env, repo)
                hook = _timed(hook_command("pre-edit", coord), stdin["pre-edit"], env, repo)
                pairs[route].append((bare, hook))
        for route, measured in pairs.items():
            out[f"board_{route}_pre_edit_p50_ms"] = statistics.median(h for _, h in measured) * 1e3
            out[f"board_{route}_pre_edit_ratio"] = statistics.median(h / b for b, h in measured)
        out.update(_in_process(socket, environments["derived"]))
    return out


def _in_process(socket: Path, derived: dict[str, str], rounds: int = 2000) -> dict[str, float]:
    """The two steps alone: the rendezvous read a derived socket adds, and the board check's
    `server.info` round trip a tab's surfaces add, in microseconds (medians of batches)."""
    route = SocketRoute.resolve(None, derived)
    reads, trips = [], []
    with Client(socket) as client:
        for _ in range(5):
            started = time.perf_counter()
            for _ in range(rounds):
                route.rerouted(derived)
            reads.append((time.perf_counter() - started) / rounds)
            started = time.perf_counter()
            for _ in range(rounds // 10):
                client.server_info()
            trips.append((time.perf_counter() - started) / (rounds // 10))
    assert len(live_daemons(derived)) == 1
    return {
        "board_rendezvous_read_us": statistics.median(reads) * 1e6,
        "board_server_info_us": statistics.median(trips) * 1e6,
    }


def main(argv: list[str] | None = None) -> int:
    from bench.harness import Daemon

    args = sys.argv[1:] if argv is None else argv
    runs = int(args[0]) if args else 9
    workdir = Path(tempfile.mkdtemp(prefix="cbb", dir="/tmp"))
    daemon = Daemon(workdir)
    try:
        figures = measure_board_finding(daemon.socket, runs=runs)
    finally:
        daemon.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    for key, value in figures.items():
        print(f"{key}: {value:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

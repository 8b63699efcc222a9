"""The peers an agent would actually pick, side by side with coordd in one run (issue 46).

`make bench-peers` (or `python -m bench --peers-only`): each serving peer is
installed from PyPI at a pinned version into a venv of its own
(bench/peer_venvs.py), started as a real server on a free port in a scratch
directory with a fresh database, and driven through its public interface by
one process per agent (bench/agent_peer_worker.py). coordd runs the same
workloads on a fresh daemon right before each peer, so every ratio is to a
coordd measured minutes apart on the same machine:

- a race on one task, 16 and 64 agents at once, round after round: how many
  were told they won each round (must be exactly 1), and the p50 of a claim;
- a drain: 200 tasks, 16 agents claiming until none is left (tasks/s, and
  double claims: a task more than one agent was given);
- 16 agents each claiming tasks of their own (claims/s).

PostgreSQL runs the same workloads as the floor of infrastructure (its
conditional UPDATE, durable commits); Redis is the other floor row of
`make bench-peers` (bench/peers.py) and is reported here only when it cannot
run. coordinationhub, the daemon-less CLI peer, is raced process per call
against `coord claim` (bench/cli_peers.py). A peer that cannot be installed or
started is a row with the reason, never dropped.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import peer_venvs
from bench.harness import Daemon, post_tasks, spawn_workers
from bench.report import fmt_us, percentile

#: Rounds of each race (a fresh task each round).
RACE_ROUNDS = {16: 10, 64: 5}
DRAIN_TASKS = 200
DRAIN_WORKERS = 16
OWN_WORKERS = 16
OWN_PER_WORKER = 25
#: A peer's answer to one round may take this long before the peer is given up on.
ROUND_TIMEOUT_S = 180.0
TOKEN = "bench-token"


@dataclass
class Race:
    clients: int
    winners: list[int] = field(default_factory=list)
    #: Winners told so with no other holder listed (differs only for advisory peers).
    clean: list[int] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)

    @property
    def wrong_rounds(self) -> int:
        return sum(1 for w in self.winners if w != 1)


@dataclass
class Figures:
    """One side's measurements (a peer's, or coordd's next to it)."""

    races: dict[int, Race] = field(default_factory=dict)
    drain_rate: float | None = None
    drain_double: int = 0
    drain_missing: int = 0
    drain_attempts: int = 0
    drain_note: str | None = None
    own_note: str | None = None
    #: Claims of one's own task not granted (a failed call; 0 for a correct peer).
    own_lost: int = 0
    own_rate: float | None = None
    own_p50: float | None = None
    #: HTTP calls reset or dropped by the server and sent again, and tool calls that
    #: failed (counted as not won), over all workloads and agents.
    resets: int = 0


@dataclass
class PeerRun:
    name: str
    requirement: str
    interface: str
    settings: str
    peer: Figures | None = None
    coordd: Figures | None = None
    error: str | None = None


class Unavailable(Exception):
    """The peer cannot be installed or started here; the message says why."""


def free_port() -> int:
    from servers import free_tcp_port

    return free_tcp_port()


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without coordd's or any peer's settings, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COORD", "PYTHON"))}
    return env | extra


#: Loopback only: never through a proxy the environment may name.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def wait_http(url: str, proc: subprocess.Popen[bytes], what: str, timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            raise Unavailable(f"{what} exited with {proc.returncode} at start")
        try:
            with OPENER.open(url, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise Unavailable(f"{what} did not answer {url} within {timeout_s:.0f} s")
        time.sleep(0.2)


class Server:
    """A peer's server in `directory`; `prepare(n)` makes n pending tasks and names them."""

    name = ""
    interface = ""
    settings = ""
    address = ""
    proc: subprocess.Popen[bytes] | None = None

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir()

    def launch(self, argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        with open(self.directory / "server.log", "ab") as log:
            self.proc = subprocess.Popen(
                argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, env=env, cwd=self.directory
            )
        return self.proc

    def prepare(self, count: int) -> list[int]:
        raise NotImplementedError

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)


class CoorddServer(Server):
    name = "coordd"

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.daemon = Daemon(directory)
        self.address = str(self.daemon.socket)

    def prepare(self, count: int) -> list[int]:
        first = post_tasks(self.daemon, count)
        return list(range(first, first + count))

    def stop(self) -> None:
        self.daemon.stop()


class PeerServer(Server):
    """A peer from its own venv; `next_id` numbers the tasks of peers that have no task rows."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        why = peer_venvs.install(self.name)
        if why is not None:
            raise Unavailable(why)
        self.bin = peer_venvs.venv(self.name) / "bin"
        self.port = free_port()
        self.next_id = 1

    def numbered(self, count: int) -> list[int]:
        ids = list(range(self.next_id, self.next_id + count))
        self.next_id += count
        return ids


class CoordServerPeer(PeerServer):
    name = "coord-server"
    interface = "JSON over HTTP (`POST /call`), `task_accept`"
    settings = (
        "stdlib ThreadingHTTPServer (listen backlog 5, a connection per call), SQLite WAL"
        " with SQLite's default synchronous (FULL), BEGIN IMMEDIATE per op"
    )

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        argv = [str(self.bin / "coord-server"), "--listen", "127.0.0.1", "--port", str(self.port),
                "--db", str(self.directory / "coord.db"), "-q"]  # fmt: skip
        proc = self.launch(argv, clean_env())
        self.address = f"http://127.0.0.1:{self.port}"
        wait_http(f"{self.address}/health", proc, "coord-server")
        self.session = self._call("whoami", family="setup", project="bench")["session_id"]

    def _call(self, op: str, **args: Any) -> Any:
        request = urllib.request.Request(
            f"{self.address}/call", data=json.dumps({"op": op, "args": args}).encode()
        )
        with OPENER.open(request, timeout=60) as response:
            out = json.loads(response.read())
        assert out["ok"], out
        return out["result"]

    def prepare(self, count: int) -> list[int]:
        return [
            int(self._call("task_create", session=self.session, title=f"t{n}")["id"])
            for n in range(count)
        ]


class CoordMcpServerPeer(PeerServer):
    name = "coord-mcp-server"
    interface = "its HTTP API (`POST /claims`, one `file` claim per task)"
    settings = (
        "FastAPI on uvicorn, SQLite WAL with synchronous=NORMAL (a commit is not fsynced"
        " before the answer), one writer connection, bearer token"
    )

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        env = clean_env(
            COORD_DATABASE_PATH=str(self.directory / "coordination.db"),
            COORD_HOST="127.0.0.1",
            COORD_PORT=str(self.port),
            COORD_AUTH_TOKEN=TOKEN,
            COORD_LOG_LEVEL="warning",
        )
        proc = self.launch([str(self.bin / "coord-api")], env)
        url = f"http://127.0.0.1:{self.port}"
        wait_http(f"{url}/health", proc, "coord-mcp-server (coord-api)")
        self.address = f"{url}#{TOKEN}"

    def prepare(self, count: int) -> list[int]:
        return self.numbered(count)


class AgentMailPeer(PeerServer):
    name = "mcp-agent-mail"
    interface = "MCP over streamable HTTP (the MCP SDK client), `file_reservation_paths` exclusive"
    settings = (
        "FastMCP on uvicorn, SQLite through SQLAlchemy/aiosqlite, a Git archive of every"
        " reservation; reservations are advisory (granted with the holders listed as conflicts)"
    )

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        env = clean_env(
            DATABASE_URL=f"sqlite+aiosqlite:///{self.directory / 'mail.sqlite3'}",
            STORAGE_ROOT=str(self.directory / "archive"),
            HTTP_HOST="127.0.0.1",
            HTTP_PORT=str(self.port),
            MCP_TOOLS_MODE="extended",  # file_reservation_paths as a tool of its own
            LLM_ENABLED="false",
            LITELLM_LOCAL_MODEL_COST_MAP="True",  # no fetch from the network at start
            TOOLS_LOG_ENABLED="false",
            LOG_RICH_ENABLED="false",
            LOG_LEVEL="WARNING",
        )
        argv = [str(self.bin / "python"), "-m", "mcp_agent_mail.cli", "serve-http",
                "--host", "127.0.0.1", "--port", str(self.port)]  # fmt: skip
        proc = self.launch(argv, env)
        url = f"http://127.0.0.1:{self.port}"
        wait_http(f"{url}/health/liveness", proc, "mcp-agent-mail serve-http")
        self.address = f"{url}/mcp/"
        self.register([f"w{n}" for n in range(max(RACE_ROUNDS))])

    def register(self, agents: list[str]) -> None:
        """Every worker's agent, one after the other, before the workers start."""
        import anyio
        from mcp import Client as MCPClient

        async def run() -> None:
            async with MCPClient(self.address, mode="legacy") as client:
                for agent in agents:
                    args = {
                        "project_key": "bench",
                        "program": "bench",
                        "model": "none",
                        "name": agent,
                    }
                    result = await client.call_tool("register_agent", args)
                    if result.is_error:
                        raise Unavailable(f"register_agent {agent}: {result.content}")

        anyio.run(run)

    def prepare(self, count: int) -> list[int]:
        return self.numbered(count)


class PostgresFloor(Server):
    name = "postgresql"
    interface = "psycopg, the conditional UPDATE; drain: `FOR UPDATE SKIP LOCKED`"

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        from servers import PeerUnavailable, PostgresPeer

        if os.getuid() == 0:  # PostgreSQL runs as `postgres` then: it must reach its directory
            for parent in (directory.parent, directory.parent.parent):
                os.chmod(parent, 0o755)
        try:
            self.peer = PostgresPeer(directory)
        except (PeerUnavailable, subprocess.CalledProcessError, OSError) as exc:
            raise Unavailable(str(exc)) from exc
        self.settings = self.peer.settings
        self.address = self.peer.address
        self.next_id = 1
        import psycopg

        with psycopg.connect(self.address, autocommit=True) as conn:
            conn.execute(
                "CREATE TABLE tasks (id BIGINT PRIMARY KEY, state TEXT NOT NULL, claimed_by TEXT)"
            )

    def prepare(self, count: int) -> list[int]:
        import psycopg

        ids = list(range(self.next_id, self.next_id + count))
        self.next_id += count
        with psycopg.connect(self.address, autocommit=True) as conn:
            conn.execute(
                "INSERT INTO tasks (id, state) SELECT g, 'pending'"
                " FROM generate_series(%s::bigint, %s::bigint) g",
                (ids[0], ids[-1]),
            )
        return ids

    def stop(self) -> None:
        self.peer.stop()


class Workers:
    """`count` agent processes on one server, each answering one JSON line per request."""

    def __init__(self, server: Server, count: int) -> None:
        command = [sys.executable, "-m", "bench.agent_peer_worker", server.name, server.address]
        self.procs = spawn_workers(command, [[f"w{n}"] for n in range(count)])

    def ask(self, requests: list[dict[str, Any]]) -> tuple[float, list[dict[str, Any]]]:
        """Each request to its worker at once; (seconds to the last answer, the answers)."""
        procs = self.procs[: len(requests)]
        lines = [json.dumps(r) + "\n" for r in requests]
        started = time.perf_counter()
        for proc, line in zip(procs, lines, strict=True):
            assert proc.stdin is not None
            proc.stdin.write(line)
            proc.stdin.flush()
        answers = []
        deadline = time.monotonic() + ROUND_TIMEOUT_S
        for proc in procs:
            assert proc.stdout is not None
            ready, _, _ = select.select(
                [proc.stdout], [], [], max(0.0, deadline - time.monotonic())
            )
            if not ready:
                raise TimeoutError(f"no answer within {ROUND_TIMEOUT_S:.0f} s")
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"a worker exited ({proc.wait(10)}); see its stderr above")
            answers.append(json.loads(line))
        return time.perf_counter() - started, answers

    def close(self) -> None:
        for proc in self.procs:
            assert proc.stdin is not None
            proc.stdin.close()
        deadline = time.monotonic() + 30
        for proc in self.procs:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(30)


def measure_one(
    server: Server,
    *,
    drain: bool = True,
    own_per: int = OWN_PER_WORKER,
    rounds: dict[int, int] | None = None,
    out: Figures | None = None,
) -> Figures:
    """The three workloads against one running server, filling `out` as they go (so
    what was measured before a failure is kept)."""
    out = Figures() if out is None else out
    workers = Workers(server, max(RACE_ROUNDS))
    try:
        for clients, count in (rounds or RACE_ROUNDS).items():
            race = out.races.setdefault(clients, Race(clients))
            for _ in range(count):
                (task,) = server.prepare(1)
                _, answers = workers.ask([{"op": "race", "id": task}] * clients)
                race.winners.append(sum(bool(a["won"]) for a in answers))
                race.clean.append(sum(bool(a["clean"]) for a in answers))
                race.latencies += [float(a["us"]) for a in answers]
        if drain:
            pool = server.prepare(DRAIN_TASKS)
            seconds, answers = workers.ask([{"op": "drain", "ids": pool}] * DRAIN_WORKERS)
            given = [int(t) for a in answers for t in a["ids"]]
            out.drain_rate = len(set(given)) / seconds
            out.drain_double = len(given) - len(set(given))
            out.drain_missing = len(set(pool) - set(given))
            out.drain_attempts = sum(int(a["attempts"]) for a in answers)
        if own_per:
            ids = server.prepare(OWN_WORKERS * own_per)
            mine = [ids[n * own_per : (n + 1) * own_per] for n in range(OWN_WORKERS)]
            seconds, answers = workers.ask([{"op": "own", "ids": m} for m in mine])
            out.own_lost = len(ids) - sum(int(a["won"]) for a in answers)
            out.own_rate = (len(ids) - out.own_lost) / seconds
            out.own_p50 = percentile([float(x) for a in answers for x in a["latencies_us"]], 0.5)
        _, last = workers.ask([{"op": "own", "ids": []}] * len(workers.procs))
        out.resets = sum(int(a["resets"]) for a in last)
    finally:
        workers.close()
    return out


@dataclass
class Plan:
    """How a peer is measured: what it cannot run says why (shown in the table)."""

    kind: type[Server]
    no_drain: str = ""
    #: Claims per agent of the own-tasks workload (0: not run).
    own_per: int = OWN_PER_WORKER
    rounds: dict[int, int] | None = None


#: mcp-agent-mail's reservations serialize on a per-project archive lock (a Git
#: archive written per reservation, about half a second each here) that has timed out
#: after 60 s under concurrent requests in some runs: one round of each race, each call
#: given CALL_BUDGET_S (bench/agent_peer_worker.py), and 2 own reservations per agent.
AGENT_MAIL_OWN = 2


#: The serving peers, in the order they run; each is preceded by a fresh coordd.
SERVERS: list[Plan] = [
    Plan(CoordServerPeer),
    Plan(CoordMcpServerPeer),
    Plan(
        AgentMailPeer,
        no_drain="not run: reservations are advisory (every request is granted)",
        own_per=AGENT_MAIL_OWN,
        rounds={16: 1, 64: 1},
    ),
    Plan(PostgresFloor),
]


def measure(workdir: Path | None = None, log: Callable[[str], None] | None = None) -> list[PeerRun]:
    say = log or (lambda text: print(text, file=sys.stderr, flush=True))
    runs: list[PeerRun] = []
    with tempfile.TemporaryDirectory(prefix="cba", dir=workdir or "/tmp") as tmp:
        scratch = Path(tmp)
        for n, plan in enumerate(SERVERS):
            kind = plan.kind
            run = PeerRun(kind.name, peer_venvs.PINS.get(kind.name, "distribution package"),
                          kind.interface, kind.settings)  # fmt: skip
            runs.append(run)
            say(f"agent peers: coordd, then {kind.name}")
            coordd = CoorddServer(scratch / f"coordd{n}")
            try:
                run.coordd = measure_one(coordd)
            finally:
                coordd.stop()
            try:
                server = kind(scratch / kind.name)
            except Unavailable as exc:
                run.error = str(exc)
                continue
            except Exception as exc:  # a peer that will not start is a row, not a crash
                run.error = f"did not start: {exc!r}"
                continue
            try:
                run.settings = server.settings
                run.peer = Figures(drain_note=plan.no_drain or None)
                if plan.own_per != OWN_PER_WORKER:
                    run.peer.own_note = f"{OWN_WORKERS} agents x {plan.own_per} claims"
                measure_one(
                    server,
                    drain=not plan.no_drain,
                    own_per=plan.own_per,
                    rounds=plan.rounds,
                    out=run.peer,
                )
                if plan.rounds is not None:
                    run.settings += "; races: " + ", ".join(
                        f"{c}-way {r} round{'s' if r > 1 else ''}" for c, r in plan.rounds.items()
                    )
            except Exception as exc:
                traceback.print_exc()
                run.error = f"failed while measured: {exc!r}"
            finally:
                server.stop()
    return runs


def _ratio(mine: float | None, theirs: float | None) -> str:
    return "-" if mine is None or theirs is None or theirs == 0 else f"{mine / theirs:.2f}x"


def _winners(race: Race | None) -> str:
    if race is None or not race.winners:
        return "-"
    spread = (
        f"{min(race.winners)}"
        if min(race.winners) == max(race.winners)
        else (f"{min(race.winners)}-{max(race.winners)}")
    )
    text = f"{spread} ({race.wrong_rounds} of {len(race.winners)} rounds != 1)"
    if race.clean != race.winners:
        text += f"; with no conflict listed: {min(race.clean)}-{max(race.clean)}"
    return text


def render(runs: list[PeerRun], extra: dict[str, float]) -> list[str]:
    """The "Peers" section: correctness beside speed, each peer as a ratio to coordd."""
    if not runs and "cli16_ratio" not in extra:
        return []
    lines = [
        "## Peers: what an agent would pick instead",
        "",
        "Each peer installed from PyPI at a pinned version into a venv of its own"
        " (bench/peer_venvs.py), started on a free port in a scratch directory with a fresh"
        " database, and driven through its public interface by one process per agent"
        " (bench/agent_peer_worker.py); coordd ran the same workloads on a fresh daemon just"
        " before each peer. Ratios are the peer's figure / coordd's (throughput: below 1 is"
        " slower; p50: above 1 is slower). Races: "
        + ", ".join(f"{c}-way {r} rounds" for c, r in RACE_ROUNDS.items())
        + f"; drain: {DRAIN_TASKS} tasks by {DRAIN_WORKERS} agents; own tasks:"
        f" {OWN_WORKERS} agents x {OWN_PER_WORKER} claims.",
        "",
        "| peer | interface | winners per round, 16-way | 16-way p50 / coordd's | winners per"
        " round, 64-way | 64-way p50 / coordd's | drain tasks/s / coordd's | drain: double"
        " claims, unclaimed | 16 clients, own tasks: claims/s / coordd's |",
        "| --- | --- | --- | ---: | --- | ---: | ---: | --- | ---: |",
    ]
    for run in runs:
        title = f"{run.name} (`{run.requirement}`)"
        if run.peer is None or run.coordd is None:
            lines.append(f"| {title} | {run.interface} | not measured: {run.error} | | | | | | |")
            continue
        p, c = run.peer, run.coordd
        race16, race64 = p.races.get(16), p.races.get(64)
        p50_16 = percentile(race16.latencies, 0.5) if race16 else None
        p50_64 = percentile(race64.latencies, 0.5) if race64 else None
        drain = (
            f"{p.drain_double}, {p.drain_missing}"
            if p.drain_rate is not None
            else p.drain_note or "-"
        )
        lines.append(
            f"| {title} | {run.interface} | {_winners(race16)}"
            f" | {_ratio(p50_16, percentile(c.races[16].latencies, 0.5))}"
            f" | {_winners(race64)}"
            f" | {_ratio(p50_64, percentile(c.races[64].latencies, 0.5))}"
            f" | {_ratio(p.drain_rate, c.drain_rate)} | {drain}"
            f" | {_ratio(p.own_rate, c.own_rate)}{f' ({p.own_note})' if p.own_note else ''}"
            f"{f'; {p.own_lost} not granted' if p.own_lost else ''} |"
        )
    if "race16_peer_rounds" in extra:
        lines.append(_cli_row(extra))
    lines += [
        "",
        "The same run's absolute figures (coordd's beside each peer's; the machine is shared, so"
        " compare within a row):",
        "",
        "| peer | 16-way p50 us: peer / coordd | 64-way p50 us: peer / coordd | drain tasks/s:"
        " peer / coordd | own tasks claims/s: peer / coordd | coordd's winners per round |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for run in runs:
        if run.peer is None or run.coordd is None:
            continue
        p, c = run.peer, run.coordd

        def us(f: Figures, clients: int) -> str:
            race = f.races.get(clients)
            return fmt_us(percentile(race.latencies, 0.5)) if race else "-"

        def rate(value: float | None) -> str:
            return "-" if value is None else f"{value:,.0f}" if value >= 10 else f"{value:.2f}"

        lines.append(
            f"| {run.name} | {us(p, 16)} / {us(c, 16)} | {us(p, 64)} / {us(c, 64)}"
            f" | {rate(p.drain_rate)} / {rate(c.drain_rate)}"
            f" | {rate(p.own_rate)} / {rate(c.own_rate)}"
            f" | {_winners(c.races.get(16))}; {_winners(c.races.get(64))} |"
        )
    lines.append("")
    for run in runs:
        if run.settings:
            trouble = run.peer.resets if run.peer is not None else 0
            lines.append(
                f"- {run.name}: {run.settings}"
                + (
                    f"; {trouble:,} calls reset and sent again, or failed, in all"
                    if trouble
                    else ""
                )
                + (f"; error: {run.error}" if run.error and run.peer is not None else "")
            )
    if "race16_peer_rounds" in extra:
        lines.append(
            "- coordinationhub: its CLI, a process per call, SQLite in a storage directory and no"
            " server, raced against `coord claim` processes (bench/cli_peers.py): winners are the"
            " calls that exit 0; own tasks is `acquire-lock` of a lock of one's own."
        )
    return [*lines, ""]


def _cli_winners(extra: dict[str, float], agents: int, who: str) -> str:
    low, high = extra[f"race{agents}_{who}_min"], extra[f"race{agents}_{who}_max"]
    spread = f"{low:.0f}" if low == high else f"{low:.0f}-{high:.0f}"
    return (
        f"{spread} ({extra[f'race{agents}_{who}_wrong']:.0f} of"
        f" {extra[f'race{agents}_{who}_rounds']:.0f} rounds != 1)"
    )


def _cli_row(extra: dict[str, float]) -> str:
    """coordinationhub's CLI against `coord claim`, both a process per call (cli_peers)."""
    requirement = peer_venvs.PINS["coordinationhub"]
    return (
        f"| coordinationhub (`{requirement}`) | CLI, a process per call (`acquire-lock`);"
        " ratios to `coord claim` processes | "
        + _cli_winners(extra, 16, "peer")
        + " | - | "
        + _cli_winners(extra, 64, "peer")
        + " | - | not run: no claim-next; a drain would be a listing process per claim | -"
        f" | {1 / extra['cli16_ratio']:.2f}x |"
    )


def main(argv: list[str] | None = None) -> int:
    runs = measure()
    print("\n".join(render(runs, {})))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

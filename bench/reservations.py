"""What `reservation.check` and `reservation.acquire` cost as live reservations pile up.

Two projects on one daemon: one with a handful of reservations, one with
many (spread over directories, as agents reserve what they edit). Latency
is one client's round trip, sequential, reported with `ping`'s round trip
measured at the same moments as the baseline: flat ratios mean the index
keeps a check at the cost of a lookup.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path

from coordd_client import Client
from coordd_wire.bounds import MAX_CHECK_PATHS, MAX_PATH_SEGMENTS

#: Patterns per `reservation.acquire` while filling (the protocol's maximum).
FILL_BATCH = 64


def _fill(client: Client, project: str, count: int) -> None:
    """`count` exclusive reservations: 100 agents, each a spread of files and directories."""
    patterns = [
        f"pkg{n % 997}/mod{n // 997}/file{n}.py" if n % 4 else f"pkg{n % 997}/dir{n}/**"
        for n in range(count)
    ]
    for start in range(0, count, FILL_BATCH):
        agent = f"filler{(start // FILL_BATCH) % 100}"
        client.reserve(patterns[start : start + FILL_BATCH], agent=agent, project=project)


def _p50_us(action: Callable[[], object], samples: int) -> float:
    latencies = []
    for _ in range(samples):
        started = time.perf_counter()
        action()
        latencies.append(time.perf_counter() - started)
    return statistics.median(latencies) * 1e6


def measure_reservations(
    socket: Path, sizes: tuple[int, ...] = (10, 100_000), samples: int = 400
) -> dict[str, float]:
    out: dict[str, float] = {}
    with Client(socket, timeout_s=600) as client:
        for size in sizes:
            out.update(_measure_one_size(client, size, samples))
    return out


def _measure_one_size(client: Client, size: int, samples: int) -> dict[str, float]:
    project = f"/bench/reservations-{size}"
    started = time.perf_counter()
    _fill(client, project, size)
    filled_s = time.perf_counter() - started
    ping = _p50_us(client.ping, samples)
    probes = iter([f"pkg{n % 997}/mod{n % 7}/probe{n}.py" for n in range(samples)])
    check = _p50_us(
        lambda: client.check_paths([next(probes)], project=project, agent="me"), samples
    )
    fresh = iter(range(10**9))

    def acquire_and_release() -> None:
        pattern = f"pkg{next(fresh) % 997}/new/{next(fresh)}.py"
        client.reserve([pattern], agent="me", project=project)
        client.unreserve([pattern], agent="me", project=project)

    pair = _p50_us(acquire_and_release, samples // 2)
    return {
        f"reservation_fill_s_{size}": filled_s,
        f"reservation_ping_us_{size}": ping,
        f"reservation_check_us_{size}": check,
        f"reservation_acquire_release_us_{size}": pair,
    }


#: Issue 44's crowd: live wildcard-leading reservations, each a candidate of every path.
GUARD_WILDCARDS = 10_000


def measure_guard_worst(
    socket: Path, live: int = GUARD_WILDCARDS, runs: int = 5
) -> dict[str, float]:
    """`file.guard` against `live` wildcard-leading reservations: 16 paths (a large
    edit, within the hooks' 3 s?), and the worst one request may ask (256 paths,
    MAX_PATH_SEGMENTS segments in all), with the slowest claim another client made
    meanwhile (the writer is not held for the matching)."""
    project = f"/bench/guard-{live}"
    with Client(socket, timeout_s=600, project=project) as client:
        for start in range(0, live, FILL_BATCH):
            texts = [f"**/gen{n}/*.py" for n in range(start, min(live, start + FILL_BATCH))]
            client.reserve(texts, agent="filler", ttl_s=86400)
        small = [f"src/mod{n}/file{n}.py" for n in range(16)]
        took = []
        for run in range(runs):
            started = time.perf_counter()
            client.file_guard(small, agent=f"editor{run}", worktree=project)
            took.append(time.perf_counter() - started)
        depth = MAX_PATH_SEGMENTS // MAX_CHECK_PATHS
        worst = ["/".join([f"d{n}"] * (depth - 1) + [f"f{n}.py"]) for n in range(MAX_CHECK_PATHS)]
        worst_s, claim_s = _guard_with_claims(socket, project, worst)
    return {
        "guard_16_wildcards_p50_s": statistics.median(took),
        "guard_16_wildcards_max_s": max(took),
        "guard_worst_request_s": worst_s,
        "guard_worst_claim_max_s": claim_s,
        "guard_wildcards": float(live),
    }


def _guard_with_claims(socket: Path, project: str, paths: list[str]) -> tuple[float, float]:
    """One guard of `paths`, timed; and the slowest of the claims made while it ran."""
    done = threading.Event()
    took: list[float] = []

    def guard() -> None:
        with Client(socket, timeout_s=600, project=project) as client:
            started = time.perf_counter()
            client.file_guard(paths, agent="worst", worktree=project)
            took.append(time.perf_counter() - started)
        done.set()

    latencies = [0.0]
    with Client(socket, timeout_s=600, project=project) as claimer:
        ids = [claimer.post(f"bench guard claim {n}").task.id for n in range(2000)]
        thread = threading.Thread(target=guard)
        thread.start()
        for task_id in ids:
            if done.is_set():
                break
            started = time.perf_counter()
            claimer.claim(task_id, agent="claimer")
            latencies.append(time.perf_counter() - started)
            time.sleep(0.01)
        thread.join()
    return took[0], max(latencies)

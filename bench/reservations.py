"""What `reservation.check` and `reservation.acquire` cost as live reservations pile up.

Two projects on one daemon: one with a handful of reservations, one with
many (spread over directories, as agents reserve what they edit). Latency
is one client's round trip, sequential, reported with `ping`'s round trip
measured at the same moments as the baseline: flat ratios mean the index
keeps a check at the cost of a lookup.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

from coordd_client import Client

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

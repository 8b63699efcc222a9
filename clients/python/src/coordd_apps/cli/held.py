"""What this agent holds, as far as `coord` on this machine knows (for `heartbeat`).

The protocol has no "what did I hold?" query, and none is needed: every
claim this CLI wins (`claim`, `next`, `hold`) is written down here with its
fence, and `done`, `fail` and `release` cross it out. `heartbeat` renews,
then checks each recorded claim: one no longer held by this agent with that
fence was lost (it expired and was taken, cancelled, or claimed again).

The record lives in the state directory, one small JSON file per agent,
read and rewritten under an exclusive `flock` so concurrent `coord`
processes of one agent never lose an entry. Its limit: claims made through
another client (the Python client, the MCP server) are not in it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from coordd_wire.paths import state_dir


def _path(agent: str) -> Path:
    # Agent names may hold any printable character: hash them into a file name.
    digest = hashlib.sha256(agent.encode()).hexdigest()[:24]
    return state_dir() / "held" / f"{digest}.json"


@contextmanager
def _locked(agent: str) -> Iterator[dict[str, int]]:
    path = _path(agent)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        raw = os.pread(fd, 1 << 20, 0)
        try:
            claims = {str(k): int(v) for k, v in json.loads(raw or b"{}").items()}
        except (ValueError, AttributeError):
            claims = {}  # a damaged record is started afresh, never fatal
        before = dict(claims)
        yield claims
        if claims != before:
            data = json.dumps(claims, sort_keys=True).encode()
            os.ftruncate(fd, 0)
            os.pwrite(fd, data, 0)
    finally:
        os.close(fd)


def remember(agent: str, task_id: int, fence: int) -> None:
    with _locked(agent) as claims:
        claims[str(task_id)] = fence


def forget(agent: str, task_id: int) -> None:
    with _locked(agent) as claims:
        claims.pop(str(task_id), None)


def recorded(agent: str) -> dict[int, int]:
    """Task id -> the fence this agent claimed it with."""
    with _locked(agent) as claims:
        return {int(k): v for k, v in claims.items()}

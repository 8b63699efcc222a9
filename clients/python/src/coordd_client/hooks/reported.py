"""Which assigned tasks an agent was already told about (by session start or a wake-up),
so a tab that chose not to take a task is not woken for it again and again.

A task is remembered by its id and creation time: ids are never reused
within one database, and the time tells a task of a database made afresh
at the same place from the one that had the id before.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from coordd_client.protocol.paths import state_dir
from coordd_client.protocol.wire import Task

#: Remember at most this many tasks per agent (the newest).
KEEP = 1000


def _file(agent: str) -> Path:
    name = hashlib.sha1(agent.encode()).hexdigest()[:16]
    return state_dir() / "reported" / f"{name}.json"


def _key(task: Task) -> str:
    return f"{task.id}@{task.created_at}"


def _load(agent: str) -> list[str]:
    try:
        keys = json.loads(_file(agent).read_text())
    except (OSError, ValueError):
        return []
    return [k for k in keys if isinstance(k, str)] if isinstance(keys, list) else []


def was_reported(agent: str, task: Task, known: list[str] | None = None) -> bool:
    return _key(task) in (known if known is not None else _load(agent))


def reported(agent: str) -> list[str]:
    return _load(agent)


def remember(agent: str, tasks: list[Task]) -> None:
    if not tasks:
        return
    keys = _load(agent)
    keys += [k for k in map(_key, tasks) if k not in keys]
    path = _file(agent)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(keys[-KEEP:]))
    temporary.replace(path)

"""Record with the daemon a landing whose move someone else finished.

A lander killed after it moved the target (its journal says so, `journal.py`)
never told the daemon: its entry would lapse as `failed` one lease later
although the target has the commit, and the task it was to complete would stay
claimed. Whoever finishes the move (the next `coord land` onto the target, or
`coord land --recover`) calls here with the journal: as the landing's agent, it
records the landing `landed` with the commit and completes the task, both
idempotent on the daemon, so finishing the same move twice records it once.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from coordd_apps.landing.calls import retrying
from coordd_apps.landing.journal import Journal
from coordd_client.client import Client
from coordd_wire.errors import CoordError, DaemonUnavailable, LeaseLost

#: How long to wait for a daemon that is away: the recovery itself needs none.
RETRY_S = 10.0


def task_result(branch: str, onto: str, commit: str) -> str:
    """What a completed landing's task says it did (the lander says the same)."""
    return f"landed {branch} on {onto}: {commit}"


def record_landed(socket: Path | str, entry: Journal, say: Callable[[str], None]) -> None:
    """Record `entry`'s landing as landed at `entry.new`, and complete its task, as its
    agent; say what was and was not recorded (nothing here raises)."""
    lander = entry.lander
    onto = entry.ref.removeprefix("refs/heads/")
    if lander is None:
        say(f"  landing #{entry.landing}: its journal does not say whose it is; not recorded")
        return
    client = Client(socket, agent=lander.agent, project=lander.project, timeout_s=30)
    try:
        _record(client, entry, lander.branch, onto, say)
        if lander.task is not None:
            task = lander.task
            result = task_result(lander.branch, onto, entry.new)
            try:
                retrying("task.complete", lambda: client.complete(task, result=result), RETRY_S)
                say(f"  task #{task} completed: {result}")
            except (CoordError, DaemonUnavailable) as exc:
                say(f"  task #{task} not completed: {exc}")
    finally:
        client.close()


def _record(
    client: Client, entry: Journal, branch: str, onto: str, say: Callable[[str], None]
) -> None:
    try:
        done = retrying(
            "land.finish",
            lambda: client.finish_landing(entry.landing, "landed", commit=entry.new),
            RETRY_S,
        ).landing
    except LeaseLost as exc:  # it lapsed, or was marked failed, before the move was finished
        say(
            f"  landing #{entry.landing} of {branch} stays as the daemon recorded it"
            f" ({exc.message}), although {onto} has its commit {entry.new[:12]}"
        )
        return
    except (CoordError, DaemonUnavailable) as exc:
        say(f"  landing #{entry.landing} of {branch} was not recorded as landed: {exc}")
        return
    say(f"  recorded landing #{done.id} of {branch}: {done.state} ({entry.new[:12]})")

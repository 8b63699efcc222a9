"""What a waiting lander says of the landing ahead of it, and taking over one whose
lander died on this machine.

A lander killed with `kill -9` stops heartbeating, and its landing would hold the
queue until its lease lapses, one `--ttl` (600 s) later. A lander waiting behind it
on the same machine need not wait that long: the dead lander's lock file
(`owner.py`) is left with its lock free and its pid gone. Then the waiting lander
first finishes any move the dead one left half-done (`checkout.recover`, which
records it `landed` if the target moved), and otherwise marks that landing failed,
as its agent, with why: the slot goes to the next at once. Landers elsewhere (another
machine, another clone) are not known here; theirs lapse as before.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from coordd_apps.landing import checkout, git, journal, owner, recorded
from coordd_client.client import Client
from coordd_wire.errors import CoordError, DaemonUnavailable, LeaseLost
from coordd_wire.wire import Landing


def clock(instant: str) -> str:
    """A wire time (UTC) as this machine's HH:MM:SS."""
    try:
        return (
            datetime.fromisoformat(instant.replace("Z", "+00:00")).astimezone().strftime("%H:%M:%S")
        )
    except ValueError:
        return instant


def waiting_line(head: Landing, lander: owner.Owner | None) -> str:
    """Whose landing this one waits for, since when, and until when at the latest."""
    pid = f"pid {lander.pid}" if lander is not None else "lander not on this machine"
    return (
        f"  behind #{head.id} (branch {head.branch}, lander {head.agent}, {pid},"
        f" {head.state} since {clock(head.updated_at)}, its lease runs until"
        f" {clock(head.expires_at)})"
    )


def take_over(client: Client, repo: Path, head: Landing, say: Callable[[str], None]) -> bool:
    """End `head` if its lander died on this machine (`owner.gone`); whether it did."""
    common = git.common_dir(repo)
    lander = owner.gone(common, head.id)
    if lander is None:
        return False
    started = time.strftime("%H:%M:%S", time.localtime(lander.since))
    why = (
        f"taken over by {client.agent}: its lander, pid {lander.pid} on"
        f" {socket.gethostname()} (started {started}), is gone"
    )
    say(f"  #{head.id}'s lander (pid {lander.pid}) is gone: taking its landing over")

    def landed(entry: journal.Journal) -> None:
        recorded.record_landed(client.socket_path, entry, say)

    try:
        checkout.recover(repo, head.onto, wait_s=0, say=say, landed=landed)
    except git.GitFailed as exc:
        say(f"  its half-done move of {head.onto} is left: {exc}")
        return False
    mover = Client(client.socket_path, agent=head.agent, project=head.project, timeout_s=30)
    try:
        mover.finish_landing(head.id, "failed", reason=why)
        say(f"  marked #{head.id} failed ({why})")
    except LeaseLost:
        pass  # finished meanwhile (the recovery recorded it, or it lapsed)
    except (CoordError, DaemonUnavailable) as exc:
        say(f"  could not mark #{head.id} failed: {exc}")
        return False
    finally:
        mover.close()
    owner.clear(common, head.id)
    return True

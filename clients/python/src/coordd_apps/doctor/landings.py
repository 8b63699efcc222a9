"""The landing check: did a `coord land` die half-way through moving a target?

A lander journals each move of a target and its checkout, and removes the
journal when done (`landing/journal.py`). A journal whose lander is gone means
the checkout of that target may be half-updated: some files old, some new.
The next `coord land` onto that target finishes it by itself; this check says
so before anyone trips over it, and names the command that finishes it now.
It also names a landing whose lander died on this machine without finishing
(`landing/owner.py`: its lock file left, the lock free, its pid gone): until its
lease lapses such a landing holds the queue, unless a `coord land` waiting behind
it takes it over, as one does at once.
The doctor writes nothing, so it only looks (the lock probes create nothing).
"""

from __future__ import annotations

import time
from pathlib import Path

import msgspec

from coordd_apps.doctor.findings import Finding, HostFailed, run_host
from coordd_apps.landing import journal, owner

SECTION = "landing"
FIX = "coord land --recover"


def check_landings(cwd: Path) -> list[Finding]:
    try:
        done = run_host(["git", "rev-parse", "--path-format=absolute", "--git-common-dir"], cwd, 15)
    except HostFailed:
        return []
    if done.returncode != 0 or not done.stdout.strip():
        return []  # not a repository: the worktrees section says so
    common = Path(done.stdout.strip())
    targets = journal.targets(common)
    found = [_dead(landing_id, lander) for landing_id, lander in owner.dead(common)]
    if not targets:
        found.append(Finding(SECTION, "journals", True, "no landing was interrupted half-way"))
    return found + [_finding(common, target) for target in targets]


def _dead(landing_id: int, lander: owner.Owner) -> Finding:
    started = time.strftime("%H:%M:%S", time.localtime(lander.since))
    detail = (
        f"landing #{landing_id}: its lander, pid {lander.pid} on this machine (started"
        f" {started}), is gone without finishing; while #{landing_id} is open it holds"
        " the queue until its lease lapses, unless a `coord land` onto its target takes"
        " it over (one waiting behind it does so at once). `coord land --queue` shows it"
    )
    data = {"landing": landing_id, "pid": lander.pid, "host": lander.host, "since": lander.since}
    return Finding(SECTION, f"lander-{landing_id}", False, detail, data=data)


def _finding(common: Path, target: str) -> Finding:
    path = journal.journal_path(common, target)
    try:
        entry = journal.read(common, target)
    except (OSError, msgspec.DecodeError) as exc:
        return Finding(SECTION, target, False, f"{target}: unreadable journal {path}: {exc}")
    if entry is None:
        return Finding(SECTION, target, True, f"{target}: its landing just finished")
    data = {"journal": str(path), **msgspec.structs.asdict(entry)}
    who = f"landing #{entry.landing} (pid {entry.pid} on {entry.host})"
    if journal.busy(common, target):
        detail = f"{target}: {who} is moving it now"
        return Finding(SECTION, target, True, detail, note=True, data=data)
    where = f"its checkout in {entry.worktree}" if entry.worktree else "nothing checked out"
    detail = (
        f"{target}: {who} died moving it from {entry.old[:12]} to {entry.new[:12]}"
        f" ({entry.step} step; {where} may be half-updated); the next `coord land`"
        f" onto {target} finishes it, or now:"
    )
    return Finding(SECTION, target, False, detail, FIX, data=data)

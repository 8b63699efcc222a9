"""Which of some tasks' dependencies are another project's: `coord post` and `coord ls`
say so, since a project's own listing never shows them (PROTOCOL.md section 9 lets a
dependency name a task of any project)."""

from __future__ import annotations

from collections.abc import Sequence

from coordd_client.client import Client
from coordd_wire.errors import CoordError
from coordd_wire.wire import Task

#: At most this many dependencies are looked up to find the ones of other projects.
MAX_BLOCKER_LOOKUPS = 50


def blockers_elsewhere(
    client: Client, tasks: Sequence[Task], project: str, *, every: bool = False
) -> dict[int, str]:
    """{id: its project} for the dependencies of `tasks` that are another project's.

    Dependencies may name a task of any project (PROTOCOL.md section 9), which
    this project's `ls` never lists: it marks them instead. `every` looks at all
    dependencies, not only the ones still blocking.
    """
    listed = {t.id for t in tasks}
    wanted = sorted({i for t in tasks for i in (t.depends_on if every else t.blocked_by)} - listed)[
        :MAX_BLOCKER_LOOKUPS
    ]
    found: dict[int, str] = {}
    for dependency in wanted:
        try:
            other = client.get(dependency).task
        except CoordError:
            continue
        if other.project != project:
            found[dependency] = other.project
    return found

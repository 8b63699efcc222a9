"""The schema step of 1.2 section 11 (issue 33): recorded edits and what each agent has seen.

Two small tables, one row per (path, worktree, agent), each overwritten in
place: `file_edits` the newest recorded edit of a path by an agent in a
worktree (the stale-write verdict and "who else is editing"), `file_seen`
the content an agent last read or wrote there (its baseline). Neither is
touched by a claim, a heartbeat or any task transition: nothing here is on
the claim path. Rows older than `store.edits.KEEP_S` are deleted by the
retention duty, so both stay bounded by the files edited in a day.
"""

from __future__ import annotations

#: SQLite's step; `store/postgres/edits_schema.py` is its twin.
EDITS: tuple[str, ...] = (
    """CREATE TABLE file_edits (
        project TEXT NOT NULL,
        path TEXT NOT NULL,                -- relative to the project (worktree) top
        worktree TEXT NOT NULL,            -- the absolute top of the worktree edited
        agent TEXT NOT NULL,
        at TEXT NOT NULL,
        hash TEXT NOT NULL,                -- the content after the edit ("": deleted)
        PRIMARY KEY (project, path, worktree, agent)
    ) WITHOUT ROWID""",
    # The board's recent edits, newest first, and retention's range.
    "CREATE INDEX file_edits_recent ON file_edits (project, at)",
    """CREATE TABLE file_seen (
        agent TEXT NOT NULL,
        project TEXT NOT NULL,
        worktree TEXT NOT NULL,
        path TEXT NOT NULL,
        at TEXT NOT NULL,
        hash TEXT NOT NULL,                -- the content read or written ("": absent)
        PRIMARY KEY (agent, project, worktree, path)
    ) WITHOUT ROWID""",
    "CREATE INDEX file_seen_at ON file_seen (at)",
)

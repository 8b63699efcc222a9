"""The team store's twin of `coordd.store.edits_schema` (1.2 section 11, issue 33)."""

from __future__ import annotations

_T = 'TEXT COLLATE "C"'

EDITS: tuple[str, ...] = (
    f"""CREATE TABLE file_edits (
        project {_T} NOT NULL,
        path {_T} NOT NULL,
        worktree {_T} NOT NULL,
        agent {_T} NOT NULL,
        at {_T} NOT NULL,
        hash {_T} NOT NULL,
        PRIMARY KEY (project, path, worktree, agent)
    )""",
    "CREATE INDEX file_edits_recent ON file_edits (project, at)",
    f"""CREATE TABLE file_seen (
        agent {_T} NOT NULL,
        project {_T} NOT NULL,
        worktree {_T} NOT NULL,
        path {_T} NOT NULL,
        at {_T} NOT NULL,
        hash {_T} NOT NULL,
        PRIMARY KEY (agent, project, worktree, path)
    )""",
    "CREATE INDEX file_seen_at ON file_seen (at)",
)

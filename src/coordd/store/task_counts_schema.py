"""Schema step: how many tasks each project has in each state, kept by the database.

`server.info`'s counts (PROTOCOL.md section 6) and the counts of 1.2 section 6c
are asked for by every hook, `coord ls`, the web board and `coord top`. Counted
from the tasks, they read one index entry per task, and a board keeps every
task it ever finished: 16 ms at 100,000 tasks, ten times that at a million, on
every call. Here they are one row per project and state, moved by triggers in
the same transaction as the task's own change, so a count is exact and costs
the number of projects, never the board's history.

A claim moves two counters (pending down, claimed up). The counters of a
project share a page, so a group of claims writes that page once; the guard in
tests/integration/test_hot_path_guards.py counts it. A heartbeat or a renewal
changes no state and fires nothing.
"""

from __future__ import annotations

#: The table, filled from the tasks as they stand (once, at the upgrade), and
#: SQLite's triggers.
TASK_COUNTS: tuple[str, ...] = (
    """CREATE TABLE task_counts (
        project TEXT NOT NULL,
        state TEXT NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (project, state)
    ) WITHOUT ROWID""",
    "INSERT INTO task_counts (project, state, n)"
    " SELECT project, state, count(*) FROM tasks GROUP BY project, state",
    """CREATE TRIGGER task_counts_posted AFTER INSERT ON tasks BEGIN
        INSERT INTO task_counts (project, state, n) VALUES (new.project, new.state, 1)
            ON CONFLICT (project, state) DO UPDATE SET n = n + 1;
    END""",
    """CREATE TRIGGER task_counts_moved AFTER UPDATE OF state, project ON tasks
        WHEN old.state IS NOT new.state OR old.project IS NOT new.project BEGIN
        UPDATE task_counts SET n = n - 1 WHERE project = old.project AND state = old.state;
        INSERT INTO task_counts (project, state, n) VALUES (new.project, new.state, 1)
            ON CONFLICT (project, state) DO UPDATE SET n = n + 1;
    END""",
    """CREATE TRIGGER task_counts_deleted AFTER DELETE ON tasks BEGIN
        UPDATE task_counts SET n = n - 1 WHERE project = old.project AND state = old.state;
    END""",
)

#: The same for PostgreSQL: one trigger function for the three changes. Team mode's
#: groups each begin by locking `coordd_meta`'s row, so no two transactions move
#: counters at once and their order cannot deadlock.
TASK_COUNTS_POSTGRES: tuple[str, ...] = (
    """CREATE TABLE task_counts (
        project TEXT COLLATE "C" NOT NULL,
        state TEXT COLLATE "C" NOT NULL,
        n BIGINT NOT NULL,
        PRIMARY KEY (project, state)
    )""",
    "INSERT INTO task_counts (project, state, n)"
    " SELECT project, state, count(*) FROM tasks GROUP BY project, state",
    """CREATE FUNCTION coordd_task_counts() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'UPDATE' AND OLD.state = NEW.state AND OLD.project = NEW.project THEN
            RETURN NULL;
        END IF;
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
            UPDATE task_counts SET n = n - 1
                WHERE project = OLD.project AND state = OLD.state;
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') THEN
            INSERT INTO task_counts (project, state, n) VALUES (NEW.project, NEW.state, 1)
                ON CONFLICT (project, state) DO UPDATE SET n = task_counts.n + 1;
        END IF;
        RETURN NULL;
    END $$""",
    """CREATE TRIGGER task_counts_changed AFTER INSERT OR DELETE OR UPDATE OF state, project
        ON tasks FOR EACH ROW EXECUTE FUNCTION coordd_task_counts()""",
)

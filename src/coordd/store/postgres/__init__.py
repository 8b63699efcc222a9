"""The team store: PostgreSQL through sync psycopg 3 (the `team` extra; docs/TEAM-MODE.md).

Nothing outside team mode imports this package, so the embedded daemon and
the plain CLI never load psycopg.
"""

"""A real PostgreSQL for the team-mode tests: one throwaway cluster per session.

The cluster comes from the distribution's packages (`.ci/run` and `make test`
install them where they can: scripts/ensure-postgres.sh). Without them the
PostgreSQL cases skip with the command that installs them, unless
`COORDD_REQUIRE_POSTGRES=1` (set by CI), where they fail instead: CI never
passes by skipping them.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from servers import PeerUnavailable, PostgresPeer
from support import short_tmpdir

REQUIRE_ENV = "COORDD_REQUIRE_POSTGRES"
INSTALL_HINT = "install it with `sudo apt-get install postgresql` (Debian/Ubuntu), then make test"

_databases = itertools.count(1)


@contextmanager
def throwaway_cluster(*, tcp: bool = False, hba: tuple[str, ...] = ()) -> Iterator[PostgresPeer]:
    """A fresh cluster, or skip (fail where PostgreSQL is required); see PostgresPeer.

    Stopped (if a test left it running) and its directory removed when the block ends:
    a cluster is 50 MB to 1.7 GB once a session has used it, and left behind they
    filled this machine's disk (77 GB of them in /tmp, found in review)."""
    workdir = short_tmpdir("pg")
    try:
        try:
            cluster = PostgresPeer(workdir, tcp=tcp, hba=hba)
        except PeerUnavailable as exc:
            if os.environ.get(REQUIRE_ENV) == "1":
                pytest.fail(f"PostgreSQL is required here ({REQUIRE_ENV}=1) but: {exc}")
            pytest.skip(f"PostgreSQL is not installed ({exc}); {INSTALL_HINT}")
        try:
            yield cluster
        finally:
            if cluster.proc.poll() is None:
                cluster.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def create_database(cluster: PostgresPeer) -> str:
    """A new empty database on `cluster`; its `postgresql://` DSN."""
    import psycopg

    name = f"t{os.getpid()}_{next(_databases)}"
    with psycopg.connect(cluster.address, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return cluster.url(name)


def psql(dsn: str, sql: str, args: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
    """Run one statement on the store directly (to inspect it, or to break it)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        cursor = conn.execute(sql, args)
        return list(cursor.fetchall()) if cursor.description else []

"""Team store DSNs on a real PostgreSQL: never rewritten, never an SQLite file (issue 43).

A daemon given a `postgresql://` DSN in any libpq URI form (the empty
authority, a Unix socket directory in `host=`, a percent-encoded user and
password, an IPv6 host, `service=`, several hosts) serves that store in team
mode and leaves no file in its working directory. A store argument that
reads as a URL but is not a team store is refused, as is a password on the
command line; a store that cannot be reached at start ends the daemon with
the reason. The cluster of this module listens on 127.0.0.1 and ::1 too
and asks two roles for a password (SCRAM), so a wrong or missing one fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from coordd.dsn import redact
from postgres import psql, throwaway_cluster
from servers import PostgresPeer, free_tcp_port
from support import DaemonProcess, RawConnection, short_tmpdir

ROLE, PASSWORD = "coordteam", "secret"
#: A user and a password that must be percent-encoded in a URI.
AWKWARD_ROLE, AWKWARD_PASSWORD = "c@t user", "c@t:x/y%&=?#"
_ROLES = f'{ROLE},"{AWKWARD_ROLE}"'
HBA = (
    f"local all {_ROLES} scram-sha-256",
    f"host all {_ROLES} 127.0.0.1/32 scram-sha-256",
    f"host all {_ROLES} ::1/128 scram-sha-256",
)


@pytest.fixture(scope="module")
def cluster() -> Iterator[PostgresPeer]:
    """A cluster on a Unix socket, 127.0.0.1 and ::1, with two password-only roles."""
    import psycopg
    from psycopg import sql

    with throwaway_cluster(tcp=True, hba=HBA) as peer:
        with psycopg.connect(peer.address, autocommit=True) as conn:
            for role, password in ((ROLE, PASSWORD), (AWKWARD_ROLE, AWKWARD_PASSWORD)):
                create = sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}")
                conn.execute(create.format(sql.Identifier(role), sql.Literal(password)))
        yield peer


_numbers = iter(range(1, 1_000_000))


def new_database(cluster: PostgresPeer, owner: str = ROLE) -> str:
    """A new empty database that `owner` may create the schema in; its name."""
    name = f"dsn{os.getpid()}_{next(_numbers)}"
    psql(cluster.address, f'CREATE DATABASE "{name}" OWNER "{owner}"')
    return name


def superuser_dsn(cluster: PostgresPeer, database: str) -> str:
    return cluster.address.replace("dbname=postgres", f"dbname={database}")


def empty_authority(cluster: PostgresPeer, database: str, password: str = PASSWORD) -> str:
    """The issue's DSN: no authority at all, everything (password too) in the query."""
    return (
        f"postgresql:///{database}?host={cluster.host}&port={cluster.port}"
        f"&user={ROLE}&password={password}"
    )


def private_file(directory: Path, name: str, text: str) -> Path:
    """A file libpq accepts secrets from (a pgpass file must be 0600)."""
    path = directory / name
    path.write_text(text)
    path.chmod(0o600)
    return path


def files_left(workdir: Path) -> set[str]:
    """What a daemon made in its working directory, but its own logs."""
    return {p.name for p in workdir.iterdir() if not p.name.startswith("daemon-")}


def cmdline(pid: int) -> bytes:
    return Path(f"/proc/{pid}/cmdline").read_bytes()


def assert_serves_the_team_store(daemon: DaemonProcess, cluster: PostgresPeer, db: str) -> None:
    """Team mode on `db` (not an SQLite file), the password nowhere a user sees it."""
    assert daemon.store is not None
    with daemon.client() as client:
        info = client.server_info()
        posted = client.post("on the team store", agent="a").task
    assert info.store is not None and info.store.backend == "postgresql", info.store
    assert info.db_path is None
    assert info.store.location == redact(daemon.store)
    titles = psql(superuser_dsn(cluster, db), "SELECT title FROM tasks WHERE id = %s", (posted.id,))
    assert titles == [("on the team store",)]
    # Only its socket and the record beside it: no file named after the DSN.
    assert files_left(daemon.workdir) <= {"s.sock", "s.sock.store"}, files_left(daemon.workdir)
    for secret in (PASSWORD, AWKWARD_PASSWORD, quote(AWKWARD_PASSWORD, safe="")):
        assert secret.encode() not in cmdline(daemon.pid)
        assert secret not in info.store.location
    record = daemon.socket_path.with_name(daemon.socket_path.name + ".store").read_text()
    assert record.strip() == info.store.location


def start(daemon: DaemonProcess) -> DaemonProcess:
    daemon.cwd = daemon.workdir
    return daemon.start()


# --- every libpq URI form serves the team store --------------------------------------------


def _form_empty_authority(cluster: PostgresPeer, db: str, scratch: Path) -> DaemonProcess:
    """Password in the query, so through $COORDD_STORE (argv passwords are refused)."""
    return DaemonProcess(scratch, store=empty_authority(cluster, db), store_in_env=True)


def _form_socket_host_and_pgpass(cluster: PostgresPeer, db: str, scratch: Path) -> DaemonProcess:
    """On the command line, the password in a pgpass file ($PGPASSFILE)."""
    passfile = private_file(scratch.parent, "pgpass", f"*:*:{db}:{ROLE}:{PASSWORD}\n")
    store = f"postgresql://{ROLE}@/{db}?host={cluster.host}&port={cluster.port}"
    return DaemonProcess(scratch, store=store, env={"PGPASSFILE": str(passfile)})


def _form_percent_encoded(cluster: PostgresPeer, db: str, scratch: Path) -> DaemonProcess:
    """User and password percent-encoded in the authority, over TCP to 127.0.0.1."""
    user, password = quote(AWKWARD_ROLE, safe=""), quote(AWKWARD_PASSWORD, safe="")
    store = f"postgresql://{user}:{password}@127.0.0.1:{cluster.port}/{db}"
    return DaemonProcess(scratch, store=store, store_in_env=True)


def _form_ipv6(cluster: PostgresPeer, db: str, scratch: Path) -> DaemonProcess:
    """An IPv6 host on the command line, the password in $PGPASSWORD."""
    store = f"postgres://{ROLE}@[::1]:{cluster.port}/{db}?application_name=ipv6%20form"
    return DaemonProcess(scratch, store=store, env={"PGPASSWORD": PASSWORD})


def _form_service(cluster: PostgresPeer, db: str, scratch: Path) -> DaemonProcess:
    """Everything in a service file ($PGSERVICEFILE), named in the query."""
    service = private_file(
        scratch.parent,
        "pg_service.conf",
        f"[coordteam]\nhost={cluster.host}\nport={cluster.port}\nuser={ROLE}\n"
        f"password={PASSWORD}\ndbname={db}\n",
    )
    return DaemonProcess(
        scratch, store="postgresql:///?service=coordteam", env={"PGSERVICEFILE": str(service)}
    )


def _form_several_hosts(cluster: PostgresPeer, db: str, scratch: Path) -> DaemonProcess:
    """Two hosts, the first with nobody listening: libpq goes on to the second."""
    dead = free_tcp_port()
    store = f"postgresql://{ROLE}@127.0.0.1:{dead},[::1]:{cluster.port}/{db}"
    return DaemonProcess(scratch, store=store, env={"PGPASSWORD": PASSWORD})


FORMS = {
    "empty-authority": _form_empty_authority,
    "socket-host-pgpass": _form_socket_host_and_pgpass,
    "percent-encoded": _form_percent_encoded,
    "ipv6": _form_ipv6,
    "service": _form_service,
    "several-hosts": _form_several_hosts,
}


@pytest.mark.parametrize("form", FORMS)
def test_every_libpq_uri_form_serves_the_team_store(cluster: PostgresPeer, form: str) -> None:
    owner = AWKWARD_ROLE if form == "percent-encoded" else ROLE
    db = new_database(cluster, owner)
    root = short_tmpdir("dsn")
    (root / "d").mkdir()
    daemon = start(FORMS[form](cluster, db, root / "d"))
    try:
        assert_serves_the_team_store(daemon, cluster, db)
        assert daemon.stop() == 0
    finally:
        daemon.ensure_dead()


# --- the "Done means": two daemons, the empty-authority DSN, one log ----------------


def read_log(daemon: DaemonProcess) -> list[tuple[int, str, int | None]]:
    """The whole event log through this daemon (events.since), as (seq, type, task)."""
    raw = RawConnection(daemon.socket_path)
    try:
        seen: list[tuple[int, str, int | None]] = []
        while True:
            after = seen[-1][0] if seen else 0
            page = raw.call("events.since", {"after_seq": after, "limit": 500})["result"]
            seen += [(e["seq"], e["type"], e.get("task_id")) for e in page["events"]]
            if not page["events"]:
                return seen
    finally:
        raw.close()


def test_two_daemons_on_the_empty_authority_dsn_share_one_gap_free_log(
    cluster: PostgresPeer,
) -> None:
    db = new_database(cluster)
    store = empty_authority(cluster, db)
    root = short_tmpdir("done")
    pair = []
    for node in ("a", "b"):
        (root / node).mkdir()
        pair.append(
            DaemonProcess(root / node, store=store, store_in_env=True, args=("--node", node))
        )
    try:
        a, b = start(pair[0]), start(pair[1])
        for daemon in (a, b):
            assert_serves_the_team_store(daemon, cluster, db)
        # Agents post through one daemon and claim and complete through the other.
        for here, there in ((a, b), (b, a), (a, b)):
            with here.client() as poster, there.client() as worker:
                ids = [poster.post(f"t{i}", agent="poster").task.id for i in range(5)]
                for task_id in ids:
                    fence = worker.claim(task_id, "worker", lease_s=60).task.fence
                    assert fence is not None
                    worker.complete(task_id, "worker", fence=fence)
        log_a, log_b = read_log(a), read_log(b)
        seqs = [int(seq) for (seq,) in psql(superuser_dsn(cluster, db), "SELECT seq FROM events")]
        assert log_a == log_b
        assert [seq for seq, _, _ in log_a] == sorted(seqs) == list(range(1, len(seqs) + 1))
        assert {kind for _, kind, _ in log_a} >= {"task.posted", "task.claimed", "task.completed"}
        # One board, one id, whichever node answers (issue 43, section 1b).
        with a.client() as on_a, b.client() as on_b:
            assert on_a.server_info().board_id == on_b.server_info().board_id is not None
        for daemon in (a, b):
            assert daemon.stop() == 0
    finally:
        for daemon in pair:
            daemon.ensure_dead()


# --- refusals: nothing served, nothing created ---------------------------------------------


def run_in(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "coordd", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.parametrize("where", ["authority", "query", "encoded-key", "equals", "migrate"])
def test_a_password_on_the_command_line_is_refused_before_anything(
    cluster: PostgresPeer, where: str
) -> None:
    """The kernel shows argv in /proc/<pid>/cmdline before coordd runs: so it is refused."""
    db = new_database(cluster)
    host = f"host={cluster.host}&port={cluster.port}"
    workdir = short_tmpdir("argv")
    socket = str(workdir / "s.sock")
    store = {
        "authority": f"postgresql://{ROLE}:{PASSWORD}@/{db}?{host}",
        "query": f"postgresql:///{db}?{host}&user={ROLE}&password={PASSWORD}",
        "encoded-key": f"postgresql:///{db}?{host}&user={ROLE}&pass%77ord={PASSWORD}",
        "equals": f"postgresql://{ROLE}:{PASSWORD}@/{db}?{host}",
        "migrate": f"postgresql://{ROLE}:{PASSWORD}@/{db}?{host}",
    }[where]
    if where == "migrate":
        done = run_in(workdir, "migrate", "--from", str(workdir / "none.db"), "--to", store)
        flag = "--to"
    elif where == "equals":
        done = run_in(workdir, "serve", f"--store={store}", "--socket", socket)
        flag = "--store"
    else:
        done = run_in(workdir, "serve", "--store", store, "--socket", socket)
        flag = "--store"
    assert done.returncode == 2, done.stderr
    assert f"coordd: {flag}: a password on the command line" in done.stderr
    assert "$COORDD_STORE" in done.stderr and "~/.pgpass" in done.stderr
    assert "$PGPASSWORD" in done.stderr and "service" in done.stderr
    assert PASSWORD not in done.stderr and "Traceback" not in done.stderr
    assert files_left(workdir) == set()  # no socket, no SQLite file
    assert psql(
        superuser_dsn(cluster, db), "SELECT count(*) FROM pg_tables WHERE tablename = 'tasks'"
    ) == [(0,)]


@pytest.mark.parametrize(
    "store",
    [
        "postgresql:/coordtest?host=/run/pg&port=5432&user=coordteam",  # the bug's rewrite
        "postgres:coordtest",
        "mysql://h/db",
        "file:board.db",
        "my:board.db",
        "host=/run/pg dbname=coordtest",
    ],
)
def test_a_store_that_reads_as_a_url_is_refused_never_opened_as_sqlite(store: str) -> None:
    workdir = short_tmpdir("url")
    for args, env in (
        (("--store", store), None),
        ((), {"COORDD_STORE": store}),
    ):
        done = run_in(workdir, "serve", *args, "--socket", str(workdir / "s.sock"), env=env)
        assert done.returncode == 2, done.stderr
        assert repr(store) in done.stderr and "not a store coordd serves" in done.stderr
        assert files_left(workdir) == set()
    db = run_in(workdir, "serve", "--db", store, "--socket", str(workdir / "s.sock"))
    assert db.returncode == 2 and "not a file path" in db.stderr and files_left(workdir) == set()


def test_a_url_like_file_name_is_served_when_written_as_a_path() -> None:
    """`./my:board.db` is the way to name such a file (`sqlite:my:board.db` too)."""
    workdir = short_tmpdir("dot")
    daemon = DaemonProcess(workdir)
    daemon.command = lambda: [  # type: ignore[method-assign]
        sys.executable, "-m", "coordd", "serve", "--db", "./my:board.db",
        "--socket", str(daemon.socket_path),
    ]  # fmt: skip
    start(daemon)
    try:
        with daemon.client() as client:
            info = client.server_info()
        assert info.store is not None and info.store.backend == "sqlite"
        assert info.db_path == str(workdir / "my:board.db")
    finally:
        daemon.ensure_dead()


# --- a store unreachable at start: exit 1 with the reason ----------------------------------


def _dead_port(cluster: PostgresPeer, db: str) -> tuple[str, str]:
    return f"postgresql://{ROLE}:{PASSWORD}@127.0.0.1:{free_tcp_port()}/{db}", "Connection refused"


def _wrong_password(cluster: PostgresPeer, db: str) -> tuple[str, str]:
    return empty_authority(cluster, db, password="wrong"), "password authentication failed"


def _missing_database(cluster: PostgresPeer, db: str) -> tuple[str, str]:
    return empty_authority(cluster, db + "_missing"), "does not exist"


UNREACHABLE = {
    "dead-port": _dead_port,
    "wrong-password": _wrong_password,
    "missing-database": _missing_database,
}


@pytest.mark.parametrize("why", UNREACHABLE)
def test_a_team_store_unreachable_at_start_exits_1_with_the_reason(
    cluster: PostgresPeer, why: str
) -> None:
    db = new_database(cluster)
    store, reason = UNREACHABLE[why](cluster, db)
    workdir = short_tmpdir("down")
    done = run_in(
        workdir, "serve", "--socket", str(workdir / "s.sock"), env={"COORDD_STORE": store}
    )
    assert done.returncode == 1, done.stderr
    assert "cannot use the team store" in done.stderr and reason in done.stderr, done.stderr
    assert redact(store) in done.stderr
    assert "password=" not in done.stderr and f":{PASSWORD}@" not in done.stderr
    assert "Traceback" not in done.stderr
    assert files_left(workdir) == set()  # never bound, nothing created


def test_migrate_takes_the_team_store_from_the_environment(cluster: PostgresPeer) -> None:
    """`coordd migrate` without --to reads $COORDD_STORE, password and all, and shows it
    without the password."""
    workdir = short_tmpdir("mig")
    board = DaemonProcess(workdir).start()
    with board.client() as client:
        client.post("moves", agent="a")
    assert board.stop() == 0
    db = new_database(cluster)
    store = empty_authority(cluster, db)
    done = run_in(workdir, "migrate", "--from", str(board.db_path), env={"COORDD_STORE": store})
    assert done.returncode == 0, done.stderr
    assert redact(store) in done.stdout and PASSWORD not in done.stdout
    assert psql(superuser_dsn(cluster, db), "SELECT title FROM tasks") == [("moves",)]

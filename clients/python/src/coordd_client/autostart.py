"""Start a daemon in the background when none answers (the `coord` CLI's autostart).

The daemon is fully detached: its own session, stdin from /dev/null and
stdout/stderr to a log file in the state directory, so `$(coord ...)` and
`coord ... | jq` never wait on it; and it is never this process's child. A
go-between (`starter.py`) starts it, reports its exit status if it ends while
this process waits for it to answer, and exits once the wait is over, so init
reaps the daemon when it ends: a long-lived caller (a quick server's worker,
the MCP server) would otherwise keep every daemon it started that ended as a
zombie, whose pid looks alive. Two CLIs racing to start one end with
exactly one daemon: the loser's daemon exits at the database lock, and both
CLIs then find the winner answering. A daemon that exits at the lock held by
a daemon serving another socket is reported at once (`held_elsewhere`):
that one's pid and socket, never a wait for a socket nobody will serve.

Starts are one at a time per user (`start_lock`): a lock in the user's state
directory as the home directory alone places it (as the rendezvous), so two
first calls from two environments (a shell with its own `$XDG_*` and
`$TMPDIR`, a host that strips them), which derive two sockets and two default
databases, do not start two boards. The one that waited looks again once it
holds the lock, and uses the daemon the other started.

A socket keeps its board: the daemon records the store it serves beside
its socket (`<socket>.store`, `protocol.record`), so after a crash the
daemon started here serves that same SQLite file (`--store sqlite:PATH`,
which no `$COORDD_STORE` or `$COORDD_DB` can override), never the default
board in its place. A recorded file that is gone, or a team store (whose
password, node name and libpq settings are not the CLI's to know), is
refused with the store named instead of started.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from coordd_client.client import Client
from coordd_client.discovery import Found, answers, discover, holder_record
from coordd_client.start_guard import start_lock, wait_for_records
from coordd_wire.errors import DaemonUnavailable
from coordd_wire.paths import DB_ENV, STORE_ENV, default_db_path, state_dir
from coordd_wire.record import SQLITE_PREFIX, read_store_record, store_record_path
from coordd_wire.rendezvous import users_board, users_board_path

AUTOSTART_OFF_ENV = "COORD_NO_AUTOSTART"
#: Seconds to wait for a daemon we started to answer a ping.
READY_TIMEOUT_S = 15.0
#: The go-between that starts a daemon (run by path: `-I` puts nothing else on its path).
STARTER = str(Path(__file__).with_name("starter.py"))


def autostart_enabled(flag_no_start: bool, environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    value = env.get(AUTOSTART_OFF_ENV, "")
    return not flag_no_start and value in ("", "0")


def _daemon_command() -> list[str]:
    installed = shutil.which("coordd")
    if installed:
        return [installed]
    if importlib.util.find_spec("coordd") is not None:
        return [sys.executable, "-m", "coordd"]
    raise DaemonUnavailable(
        "no coordd answers and the coordd daemon is not installed here (pip install coordd)"
    )


#: What a spawned daemon says when another one, started at the same moment, won.
_IN_USE = "in use by another coordd"
_LOST_START_RACE = (_IN_USE, "already listening")
#: Seconds the daemon holding the database has to answer, to word the refusal.
HELD_PROBE_TIMEOUT_S = 0.5


class SpawnedDaemon:
    """A daemon this CLI started (through `starter.py`), and where its log for this
    start begins. `release` must follow the wait for it to answer."""

    def __init__(
        self,
        starter: subprocess.Popen[bytes],
        pid: int,
        log_path: Path,
        log_offset: int,
        db_path: Path | None = None,
    ) -> None:
        self.starter = starter
        #: The daemon's pid (the starter's child, never this process's).
        self.pid = pid
        self.log_path = log_path
        self.log_offset = log_offset
        #: The SQLite file it was told to serve (None: the default database).
        self.db_path = db_path
        self._status: int | None = None

    def exit_status(self) -> int | None:
        """The daemon's exit code if it has already exited while the starter waited
        with it (negative: a signal), else None."""
        stdout = self.starter.stdout
        if self._status is None and self.starter.poll() is not None and stdout is not None:
            said = stdout.read().split()
            if len(said) == 2 and said[0] == b"exit":
                self._status = int(said[1])
        return self._status

    def exit_message(self) -> str | None:
        """The daemon's last words if it has already exited, else None."""
        status = self.exit_status()
        if status is None:
            return None
        try:
            with open(self.log_path, "rb") as log:
                log.seek(self.log_offset)
                said = log.read().decode(errors="replace").strip()
        except OSError:
            said = ""
        last = said.splitlines()[-1] if said else "(it printed nothing)"
        return f"coordd exited with status {status} at start: {last}"

    def release(self) -> None:
        """Stop waiting with the daemon: the starter exits (it is reaped here), and the
        daemon, if it still runs, is init's child from then on."""
        for stream in (self.starter.stdin, self.starter.stdout):
            if stream is not None:
                stream.close()
        self.starter.wait()


def recorded_board(socket_path: Path) -> Path | None:
    """The SQLite file the daemon last on `socket_path` served (None: nothing recorded).

    Raises DaemonUnavailable, naming the store, when it cannot be started
    from here: a team store, or a file that no longer exists (a daemon
    started on it would create an empty board where the agents expect theirs).
    """
    location = read_store_record(socket_path)
    if location is None:
        return None
    record = store_record_path(socket_path)
    forget = f"remove {record} to start the default board on this socket instead"
    if not location.startswith(SQLITE_PREFIX):
        raise DaemonUnavailable(
            f"no daemon answers on {socket_path}, which served the team store {location};"
            " a team daemon is not started automatically (its password, node name and"
            f" settings are not this client's): start it as before (coordd serve --store"
            f" '{location}' --socket {socket_path}), or {forget}",
            socket=str(socket_path),
            reason="team_store",
            store=location,
        )
    db_path = Path(location[len(SQLITE_PREFIX) :])
    if not db_path.is_absolute() or not db_path.exists():
        raise DaemonUnavailable(
            f"no daemon answers on {socket_path}, which served the board {db_path}, and that"
            f" file is gone: not starting an empty board in its place; restore it, or {forget}",
            socket=str(socket_path),
            reason="store_missing",
            store=location,
        )
    return db_path


def the_users_board(environ: Mapping[str, str] | None = None) -> Path | None:
    """The user's board (`protocol.rendezvous.users_board`) to start, unless the
    environment names a store itself (`$COORDD_STORE`, `$COORDD_DB`): None when
    nothing is recorded. A recorded file that is gone is refused, naming it."""
    env = os.environ if environ is None else environ
    if env.get(STORE_ENV) or env.get(DB_ENV):
        return None
    board = users_board(env)
    if board is None:
        return None
    if not board.store.startswith(SQLITE_PREFIX):
        raise DaemonUnavailable(
            f"no coordd answers, and your board {board.board_id} is the team store"
            f" {board.store}: a team daemon is not started automatically (its password,"
            " node name and settings are not this client's); start it as you did"
            f" (`coordd serve` with its store), or remove {users_board_path(env)} to let"
            " a client start a board of its own",
            reason="team_store",
            store=board.store,
        )
    db_path = Path(board.store[len(SQLITE_PREFIX) :])
    if not db_path.is_absolute() or not db_path.exists():
        raise DaemonUnavailable(
            f"no coordd answers, and your board {board.board_id} ({db_path}) is gone: not"
            " starting an empty board in its place. Restore it; or start the board you mean"
            " from your shell (`coordd serve`: the store it serves becomes yours); or, to let"
            f" the next client start a new one where its environment says, remove"
            f" {users_board_path(env)}",
            reason="store_missing",
            store=board.store,
        )
    return db_path


def start_daemon(socket_path: Path, environ: Mapping[str, str] | None = None) -> SpawnedDaemon:
    """Spawn `coordd serve --socket PATH` detached, logging to the state directory.

    On the board the socket served before (`recorded_board`), if it recorded one,
    else on the user's board (`the_users_board`), whatever this environment's
    state directory says: a host that strips `$XDG_STATE_HOME` must not start
    a second board beside the one the user's shell starts. `environ` is the
    environment of the one asking (default: this process's): the shared MCP
    server starts a daemon for a tab as that tab would have.
    """
    db_path = recorded_board(socket_path) or the_users_board(environ)
    store = ["--store", SQLITE_PREFIX + str(db_path)] if db_path is not None else []
    log_dir: Path | str = "the state directory"
    try:
        log_dir = state_dir(environ)
        log_path = log_dir / "coordd.log"
        log_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        log = open(log_path, "ab")  # noqa: SIM115 (closed below, once the daemon has it)
    except (OSError, RuntimeError) as exc:  # RuntimeError: no home to put it in
        raise DaemonUnavailable(
            f"no coordd answers on {socket_path}, and none can be started here: its log"
            f" cannot be written in {log_dir} ({exc}); start one yourself (`coordd serve`)",
            socket=str(socket_path),
        ) from None
    command = [*_daemon_command(), "serve", *store, "--socket", str(socket_path)]
    with log:
        offset = log.tell()
        starter = subprocess.Popen(
            [sys.executable, "-I", "-S", STARTER, str(log.fileno()), *command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            pass_fds=(log.fileno(),),
            start_new_session=True,
            env=None if environ is None else dict(environ),
        )
    assert starter.stdout is not None
    said = starter.stdout.readline().split()
    if len(said) != 2 or said[0] != b"pid":
        SpawnedDaemon(starter, 0, log_path, offset).release()
        raise DaemonUnavailable(
            f"no coordd answers on {socket_path}, and it could not be started (see"
            f" {log_path}); start one yourself (`coordd serve`)",
            socket=str(socket_path),
        )
    return SpawnedDaemon(starter, int(said[1]), log_path, offset, db_path)


def held_elsewhere(socket_path: Path, db_path: Path | None = None) -> DaemonUnavailable | None:
    """The refusal to give when a live daemon holds the database (the user's default,
    or `db_path`) but serves another socket than `socket_path` (then waiting for
    `socket_path` is futile); None while it serves `socket_path`, is still
    starting, or holds nothing."""
    record = holder_record(db_path=db_path)
    if record is None or record.socket is None or record.socket == socket_path:
        return None
    db = db_path or default_db_path()
    reachable = answers(record.socket, timeout_s=HELD_PROBE_TIMEOUT_S)
    if reachable:
        advice = (
            f"it answers there: use --socket {record.socket} (or set $COORDD_SOCKET to it),"
            " or stop it to serve the database on this socket"
        )
    else:
        advice = (
            f"it does not answer there: it may be stuck (kill {record.pid} and retry);"
            f" see {state_dir() / 'coordd.log'}"
        )
    return DaemonUnavailable(
        f"no second daemon started: the database {db} is held by coordd (pid {record.pid})"
        f" serving {record.socket}, not {socket_path}; {advice}",
        socket=str(socket_path),
        reason="database_held",
        holder_pid=record.pid,
        holder_socket=str(record.socket),
        holder_answers=reachable,
    )


def wait_until_ready(
    socket_path: Path,
    timeout_s: float = READY_TIMEOUT_S,
    spawned: SpawnedDaemon | None = None,
    *,
    may_reroute: bool = True,
) -> Path:
    """Ping until a daemon answers; return the socket to use. Fail at once if the one we
    spawned has exited and nobody will answer.

    A spawned daemon that exits may simply have lost the start-up race to another
    client's daemon (it exits at the database lock), so an exit only fails the wait
    once nobody answers either. If the daemon holding the lock serves another socket
    (a client in another environment derived another one and started first), it serves
    the very database this one was started on, the same board: its socket is returned
    when it answers and the caller's socket was derived (`may_reroute`); an asked-for
    socket gets `held_elsewhere`'s refusal instead, naming the holder.
    """
    try:
        return _wait_until_ready(socket_path, timeout_s, spawned, may_reroute=may_reroute)
    finally:
        if spawned is not None:
            spawned.release()


def _wait_until_ready(
    socket_path: Path, timeout_s: float, spawned: SpawnedDaemon | None, *, may_reroute: bool
) -> Path:
    deadline = time.monotonic() + timeout_s
    lock_lost = False
    db_path = spawned.db_path if spawned is not None else None
    while True:
        try:
            with Client(socket_path, timeout_s=5) as client:
                client.ping()
            return socket_path
        except DaemonUnavailable:
            if spawned is not None and (message := spawned.exit_message()) is not None:
                if not any(benign in message for benign in _LOST_START_RACE):
                    raise DaemonUnavailable(
                        f"{message} (full log: {spawned.log_path})", socket=str(socket_path)
                    ) from None
                lock_lost = _IN_USE in message
                spawned = None  # another CLI's daemon won the start: wait for it
            if lock_lost and (refusal := held_elsewhere(socket_path, db_path)) is not None:
                holder = Path(refusal.data["holder_socket"])
                if may_reroute and refusal.data["holder_answers"]:
                    return holder
                raise refusal from None
            if time.monotonic() > deadline:
                raise DaemonUnavailable(
                    f"started coordd but it did not answer on {socket_path}"
                    f" within {timeout_s:.0f}s; see {state_dir() / 'coordd.log'}"
                ) from None
            time.sleep(0.05)


def start_and_wait(
    socket_path: Path, environ: Mapping[str, str] | None = None, *, may_reroute: bool
) -> Path:
    """Start the user's daemon on `socket_path` and wait until it answers; the socket to
    use. Under `start_lock`: a starter that waited for another looks again first, on its
    own socket and, when that was derived (`may_reroute`), in the rendezvous, and uses
    what the other started instead of starting a second board; so does one that found a
    daemon of the user's running with no record there (`unannounced.wait_for_records`)."""
    with start_lock(environ):
        if answers(socket_path):
            return socket_path
        if may_reroute:
            found = _look_again(socket_path, environ)
            if found is None and wait_for_records(socket_path, environ):
                found = _look_again(socket_path, environ)
            if found is not None:
                return found.socket
        spawned = start_daemon(socket_path, environ)
        return wait_until_ready(socket_path, spawned=spawned, may_reroute=may_reroute)


def _look_again(socket_path: Path, environ: Mapping[str, str] | None) -> Found | None:
    try:
        return discover(environ, tried=socket_path)
    except DaemonUnavailable as down:
        if down.data.get("reason") != "board_not_running":
            raise
        return None  # the user's board is down and others are live: start it


def connect(socket_path: Path, *, autostart: bool, derived: bool = False) -> Client:
    """A connected client, starting a daemon first if allowed and needed. `derived`: the
    socket was not asked for, so a daemon that won the start on another socket, holding
    the same database, is used (`start_and_wait`)."""
    try:
        return Client(socket_path).connect()
    except DaemonUnavailable:
        if not autostart:
            raise
    return Client(start_and_wait(socket_path, may_reroute=derived)).connect()

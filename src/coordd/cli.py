"""coordd's command line: `main(argv) -> int` (PROTOCOL.md section 8)."""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import trio

from coordd import __version__
from coordd.announce import second_board_refusal
from coordd.clock import Clock, OffsetClock, SystemClock
from coordd.config import DaemonConfig
from coordd.daemon import Daemon
from coordd.dsn import ARGV_PASSWORD_REFUSAL, has_password, redact
from coordd.limits import Limits
from coordd.listener import ListenerError
from coordd.paths import (
    DB_ENV,
    STORE_ENV,
    StoreRefused,
    board_path,
    file_path,
    is_team_store,
    resolve_store,
)
from coordd.platform.lockfile import DatabaseInUse
from coordd.store.connections import DatabaseUnusable, Durability
from coordd.store.failures import (
    EXIT_DISK_FAULT,
    DiskFault,
    NodeInUse,
    StoreDamaged,
    StoreUnavailable,
)
from coordd.store.schema import SchemaTooNew
from coordd_wire.location import SOCKET_ENV
from coordd_wire.paths import default_socket_path, socket_is_explicit, state_dir

log = logging.getLogger("coordd")


def started_as_users(
    args: argparse.Namespace, db_path: Path | None, dsn: str | None, socket_path: Path
) -> bool:
    """Whether this daemon is the user's own: it serves the store or the socket this
    environment derives by default (`make run`, `coordd serve` with no flags, a client's
    autostart, or the same paths spelt out). Given both another store and another
    socket it is a board on purpose (docs/BOARD.md: separate), never the user's."""
    store_given = any((args.store, args.db, os.environ.get(STORE_ENV), os.environ.get(DB_ENV)))
    default_db = state_dir() / "coord.db"
    on_default_store = not store_given or (
        dsn is None and db_path is not None and _same_file(db_path, default_db)
    )
    derived = default_socket_path(None, {k: v for k, v in os.environ.items() if k != SOCKET_ENV})
    on_derived_socket = not socket_is_explicit(args.socket) or _same_file(socket_path, derived)
    return on_default_store or on_derived_socket


def _same_file(a: Path, b: Path) -> bool:
    return a.expanduser().absolute().resolve() == b.expanduser().absolute().resolve()


#: Seconds a thread may hold the GIL while another waits for it (CPython default: 0.005).
GIL_SWITCH_INTERVAL_S = 0.001


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return value


def _file_path(text: str) -> Path:
    """An argparse type for a file path that must not read as a URL (`paths.file_path`).

    It sees the text as typed: `Path` would turn `./a:b.db` into `a:b.db`.
    """
    try:
        return file_path(text, "the path")
    except StoreRefused as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="coordd", description="The coordd daemon: a local bulletin board for coding agents."
    )
    parser.add_argument("--version", action="version", version=f"coordd {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the daemon in the foreground")
    serve.add_argument(
        "--db",
        type=_file_path,
        help="database file (default: $COORDD_DB or the state dir); a name with a colon"
        " is written ./NAME",
    )
    serve.add_argument(
        "--store",
        help="where the board lives: a file path, sqlite:PATH, or postgresql://... for team"
        " mode, without a password (default: $COORDD_STORE, which may hold one, then --db)",
    )
    serve.add_argument(
        "--node",
        help="this daemon's name on a team store (default: the host name and a hash of the"
        " socket path)",
    )
    serve.add_argument("--socket", type=Path, help="socket path (default: PROTOCOL.md section 1)")
    serve.add_argument("--max-frame", type=_positive_int, default=Limits.max_frame, metavar="BYTES")
    serve.add_argument(
        "--durability",
        choices=[d.value for d in Durability],
        default=Durability.FULL.value,
        help="full: a reply survives power loss (default); normal: it survives kill -9",
    )
    serve.add_argument(
        "--restart-grace",
        type=float,
        default=Limits.restart_grace_s,
        metavar="SECONDS",
        help="lease grace for claims that lapsed while the daemon was down",
    )
    serve.add_argument(
        "--frame-timeout",
        type=float,
        default=Limits.frame_completion_s,
        metavar="SECONDS",
        help="a started frame must be complete within this (slow-loris guard)",
    )
    serve.add_argument(
        "--write-timeout",
        type=float,
        default=Limits.write_timeout_s,
        metavar="SECONDS",
        help="a client that reads nothing for this long is disconnected",
    )
    serve.add_argument(
        "--max-db-pages",
        type=_positive_int,
        metavar="PAGES",
        help="cap the database file at this many pages (SQLite max_page_count); writes"
        " beyond it get a retryable -32004 disk_full",
    )
    serve.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])

    check = commands.add_parser("check", help="integrity check, schema version and counts")
    check.add_argument("--db", type=_file_path)

    backup = commands.add_parser("backup", help="a consistent copy of the database, while it runs")
    backup.add_argument("path", type=_file_path)
    backup.add_argument("--db", type=_file_path)

    migrate = commands.add_parser(
        "migrate", help="move a board (an SQLite file) to a new, empty team store"
    )
    migrate.add_argument(
        "--from",
        dest="source",
        type=_file_path,
        help="the SQLite file (default: $COORDD_DB or the state dir)",
    )
    migrate.add_argument(
        "--to",
        dest="target",
        metavar="postgresql://...",
        help="the team store, without a password (default: $COORDD_STORE, which may hold one)",
    )

    from coordd.service import add_service_parser

    add_service_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "serve":
        if args.store is not None and args.db is not None:
            parser.error("--store and --db name the same thing: give one of them")
        if args.store and has_password(args.store):
            return _refuse_argv_password("--store")
        return _serve(args)
    if args.command in ("check", "backup"):
        try:
            db = board_path(args.db)
        except StoreRefused as exc:
            print(f"coordd: {exc}", file=sys.stderr)
            return 2
        from coordd.admin import backup, check

        return check(db) if args.command == "check" else backup(db, args.path)
    if args.command == "migrate":
        return _migrate(args)
    if args.command == "service":
        from coordd.service import run_service_command

        return run_service_command(args)
    raise AssertionError(args.command)


def _refuse_argv_password(flag: str) -> int:
    """Exit 2: the kernel put argv in /proc/<pid>/cmdline before coordd ran at all, so
    no re-exec could have kept the password from `ps`; only not taking it there is honest."""
    print(f"coordd: {flag}: {ARGV_PASSWORD_REFUSAL}", file=sys.stderr)
    return 2


def _migrate(args: argparse.Namespace) -> int:
    """`coordd migrate`: the target from `--to` (no password) or `$COORDD_STORE` (may hold one)."""
    if args.target and has_password(args.target):
        return _refuse_argv_password("--to")
    target = args.target or os.environ.get(STORE_ENV)
    if not target or not is_team_store(target):
        given = f", not {redact(target)!r}" if target else ""
        print(
            f"coordd migrate: --to (or ${STORE_ENV}) must be a postgresql:// DSN, the team"
            f" store{given}",
            file=sys.stderr,
        )
        return 2
    try:
        source = args.source or board_path(None)
    except StoreRefused as exc:
        print(f"coordd: {exc}", file=sys.stderr)
        return 2
    if importlib.util.find_spec("psycopg") is None:
        print(TEAM_EXTRA_HINT, file=sys.stderr)
        return 1
    from coordd.store.postgres.migrate import run

    return run(source.expanduser().absolute(), target)


TEAM_EXTRA_HINT = (
    "coordd: team mode (a postgresql:// store) needs the team extra: pip install 'coordd[team]'"
)

#: A documented test hook: shift the daemon's own clock by this many seconds.
CLOCK_OFFSET_ENV = "COORDD_CLOCK_OFFSET_S"


def clock_from_environment() -> Clock:
    """The system clock, shifted by `$COORDD_CLOCK_OFFSET_S` if set (may be negative)."""
    text = os.environ.get(CLOCK_OFFSET_ENV)
    if not text:
        return SystemClock()
    try:
        offset = float(text)
    except ValueError:
        raise SystemExit(
            f"coordd: {CLOCK_OFFSET_ENV}={text!r} is not a number of seconds"
        ) from None
    log.warning("the daemon's clock is shifted by %+.3f s (%s)", offset, CLOCK_OFFSET_ENV)
    return OffsetClock(SystemClock(), offset)


def _serve(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        db_path, dsn = resolve_store(args.store, args.db)
    except StoreRefused as exc:
        print(f"coordd: {exc}", file=sys.stderr)
        return 2
    if dsn is not None and importlib.util.find_spec("psycopg") is None:
        print(TEAM_EXTRA_HINT, file=sys.stderr)
        return 1
    socket_path = default_socket_path(args.socket).expanduser().absolute()
    config = DaemonConfig(
        db_path=(db_path or Path(".")).expanduser().absolute(),
        socket_path=socket_path,
        store_dsn=dsn,
        node=args.node,
        durability=Durability(args.durability),
        limits=Limits(
            max_frame=args.max_frame,
            frame_completion_s=args.frame_timeout,
            write_timeout_s=args.write_timeout,
            restart_grace_s=args.restart_grace,
        ),
        max_db_pages=args.max_db_pages,
        users_board=started_as_users(args, db_path, dsn, socket_path),
    )
    if (refusal := second_board_refusal(config)) is not None:
        print(f"coordd: {refusal}", file=sys.stderr)
        return 1
    # The database, its WAL and lock file are the user's alone (like UMask=0077 in the unit).
    os.umask(0o077)
    # The writer thread gives up the GIL inside every SQLite call and must win it
    # back from the busy trio thread; at the default 5 ms switch interval that
    # handoff dominated claim latency under load (BENCHMARKS.md, "switch interval").
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    try:
        trio.run(Daemon(config, clock=clock_from_environment()).run)
    except DatabaseInUse as exc:
        print(
            f"coordd: {exc}: that daemon serves this board already, so there is nothing to"
            " start; to restart it, stop that one first (SIGTERM is a clean stop)",
            file=sys.stderr,
        )
        return 1
    except (
        DatabaseUnusable,
        ListenerError,
        SchemaTooNew,
        StoreUnavailable,
        NodeInUse,
    ) as exc:
        print(f"coordd: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # a second ^C while draining
        return 1
    except StoreDamaged as exc:
        log.critical("stopped: %s; exit 1", exc)
        logging.shutdown()
        os._exit(1)  # as after a disk fault: the write connection is left unclosed
    except DiskFault as exc:
        log.critical("stopped after a disk error (%s); exit %d", exc, EXIT_DISK_FAULT)
        logging.shutdown()
        # Not `return`: the interpreter's exit would close the write connection left
        # open on purpose, and closing the last connection checkpoints the WAL into
        # the database from a page cache no longer trusted. Like kill -9, the next
        # start recovers from the WAL instead.
        os._exit(EXIT_DISK_FAULT)
    log.info("stopped cleanly")
    return 0

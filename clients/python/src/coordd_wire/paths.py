"""Socket path resolution, exactly as PROTOCOL.md section 1 orders it."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from coordd_wire.location import SOCKET_ENV, SOCKET_NAME, socket_location

DB_ENV = "COORDD_DB"
#: The daemon's store (`coordd serve --store`'s variable): a client that must start a
#: daemon leaves the store to it when set.
STORE_ENV = "COORDD_STORE"


def default_socket_path(
    explicit: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Path:
    """`--socket`, else `$COORDD_SOCKET`, else the runtime dir, else `$TMPDIR/coordd-<uid>`."""
    return Path(socket_location(explicit, environ))


def socket_is_explicit(
    explicit: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> bool:
    """Whether the socket was asked for (`--socket` or `$COORDD_SOCKET`), not derived.

    An asked-for socket is the only one a client uses; a derived one may be
    the wrong guess of a host that dropped `$XDG_RUNTIME_DIR`, and then the
    client looks for the user's daemon elsewhere (docs/PROTOCOL-1.2.md).
    """
    env = os.environ if environ is None else environ
    return bool(explicit) or bool(env.get(SOCKET_ENV))


def usual_runtime_socket() -> Path | None:
    """`/run/user/<uid>/coordd/coordd.sock`: where `$XDG_RUNTIME_DIR` points on a
    systemd host (pam_systemd), for a client whose host dropped the variable."""
    if not sys.platform.startswith("linux"):
        return None
    return Path("/run/user") / str(os.getuid()) / "coordd" / SOCKET_NAME


def state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The user's state directory for coordd: XDG on Linux, Application Support on macOS.

    The daemon keeps its database here; the CLI keeps the log of a daemon it started.
    """
    env = os.environ if environ is None else environ
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "coordd"
    base = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "coordd"


def default_db_path(environ: Mapping[str, str] | None = None) -> Path:
    """`$COORDD_DB`, else `coord.db` in the user's state directory (the daemon's default)."""
    env = os.environ if environ is None else environ
    if env.get(DB_ENV):
        return Path(env[DB_ENV])
    return state_dir(env) / "coord.db"


def lock_path(db_path: Path) -> Path:
    """The daemon's lock file for a database: named after the file the path resolves
    to, so two names of one database meet at one lock. It also holds the
    daemon's record (`protocol.record`)."""
    resolved = db_path.resolve()
    return resolved.with_name(resolved.name + ".lock")

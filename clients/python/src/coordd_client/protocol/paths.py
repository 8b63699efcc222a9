"""Socket path resolution, exactly as PROTOCOL.md section 1 orders it."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

SOCKET_ENV = "COORDD_SOCKET"
SOCKET_NAME = "coordd.sock"


def default_socket_path(
    explicit: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Path:
    """`--socket`, else `$COORDD_SOCKET`, else the runtime dir, else `$TMPDIR/coordd-<uid>`."""
    env = os.environ if environ is None else environ
    if explicit:
        return Path(explicit)
    if env.get(SOCKET_ENV):
        return Path(env[SOCKET_ENV])
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / "coordd" / SOCKET_NAME
    tmp = env.get("TMPDIR") or tempfile.gettempdir()
    return Path(tmp) / f"coordd-{os.getuid()}" / SOCKET_NAME


def state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The user's state directory for coordd: XDG on Linux, Application Support on macOS.

    The daemon keeps its database here; the CLI keeps the log of a daemon it started.
    """
    env = os.environ if environ is None else environ
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "coordd"
    base = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "coordd"

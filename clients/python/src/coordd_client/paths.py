"""Socket path resolution, exactly as PROTOCOL.md section 1 orders it."""

from __future__ import annotations

import os
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

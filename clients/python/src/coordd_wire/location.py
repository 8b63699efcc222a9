"""PROTOCOL.md section 1's socket, as a string, with `os` alone.

`paths.default_socket_path` is this wrapped in a `Path`. It is apart so the
MCP relay a tab starts (`coordd_apps.mcp_relay`), whose start-up time is
its whole job, can find the directory beside the daemon's socket without
importing `pathlib` (and, when `$TMPDIR` says where, `tempfile`).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # `typing` and `collections.abc` cost the relay's start
if TYPE_CHECKING:
    from collections.abc import Mapping

SOCKET_ENV = "COORDD_SOCKET"
SOCKET_NAME = "coordd.sock"


def socket_location(
    explicit: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> str:
    """`--socket`, else `$COORDD_SOCKET`, else the runtime dir, else `$TMPDIR/coordd-<uid>`."""
    env = os.environ if environ is None else environ
    if explicit:
        return os.fspath(explicit)
    if env.get(SOCKET_ENV):
        return env[SOCKET_ENV]
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime:
        return os.path.join(runtime, "coordd", SOCKET_NAME)
    tmp = env.get("TMPDIR")
    if not tmp:
        import tempfile  # only here: it costs the relay more than the rest of its imports

        tmp = tempfile.gettempdir()
    return os.path.join(tmp, f"coordd-{os.getuid()}", SOCKET_NAME)

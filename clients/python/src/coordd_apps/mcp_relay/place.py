"""Where a tab's relay meets the shared MCP server: one socket per user, code and home.

The socket sits beside the daemon's (PROTOCOL.md section 1's directory for
the tab: `--socket`'s or `$COORDD_SOCKET`'s, else `$XDG_RUNTIME_DIR/coordd`,
else `$TMPDIR/coordd-<uid>`), as `mcp-<stamp>.sock`, with `mcp-<stamp>.lock`
(who may start it) and `mcp-<stamp>.log` (its stderr) beside it. The stamp
is a hash of:

- the installed packages' directories (the wire, the library and the apps:
  `coordd_wire`, `coordd_client`, `coordd_apps`) and every module's size and
  mtime, so a relay of upgraded code (a `pip install`, a `git pull` in an
  editable checkout) never talks to a server still running the old code;
- `$HOME`, because the tab registry the server reads for each tab's name is
  under it (`coordd_client.tabs`), so two homes never share a server;
- the interpreter, so two virtual environments of one checkout do not either.

Also what both relays (this one and the quick relay, `coordd_apps.quick.relay`) read
the same way: the `--socket` a command names, and whose process serves a socket.

Standard library only (the relay's import time is what a tab waits for).
"""

from __future__ import annotations

import _socket
import os
import stat
import sys

from coordd_wire.build import files_id

TYPE_CHECKING = False  # `typing` costs a relay as much as the rest of it
if TYPE_CHECKING:
    from collections.abc import Sequence

#: The packages whose code the stamp covers: this one and its two siblings, which a
#: server runs too (a wheel installs the three side by side, as the source tree has them).
_SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE_DIRS = tuple(
    os.path.join(_SOURCE, name) for name in ("coordd_wire", "coordd_client", "coordd_apps")
)
#: Linux's `sun_path` holds 108 bytes with its NUL; macOS's 104.
MAX_SOCKET_PATH = 103 if sys.platform == "darwin" else 107


class Unusable(Exception):
    """The directory cannot hold the shared server's socket safely (the tab is then
    served in-process)."""


class Place:
    """The shared server's files for one stamp (a plain class: `dataclasses` imports
    `inspect`, which costs the relay more than all of its own work)."""

    __slots__ = ("directory", "prefix", "stamp")

    def __init__(self, directory: str, stamp: str, prefix: str = "mcp") -> None:
        self.directory = directory
        self.stamp = stamp
        #: Whose files: `mcp` (the shared MCP server) or `quick` (`coordd_apps.quick`).
        self.prefix = prefix

    @property
    def socket(self) -> str:
        return os.path.join(self.directory, f"{self.prefix}-{self.stamp}.sock")

    @property
    def lock(self) -> str:
        return os.path.join(self.directory, f"{self.prefix}-{self.stamp}.lock")

    @property
    def log(self) -> str:
        return os.path.join(self.directory, f"{self.prefix}-{self.stamp}.log")


def code_stamp(home: str, package_dirs: tuple[str, ...] = PACKAGE_DIRS) -> str:
    """16 hex digits naming this code, this home and this interpreter (see above)."""
    return files_id(package_dirs, home, sys.executable)


def place_for(daemon_socket: str, home: str) -> Place:
    return Place(os.path.dirname(os.path.abspath(daemon_socket)), code_stamp(home))


def ensure_private(place: Place) -> None:
    """Create the directory (0700) if absent; refuse one another user owns or others may
    write to (they could swap the socket), and a socket path too long to bind."""
    if len(os.fsencode(place.socket)) > MAX_SOCKET_PATH:
        raise Unusable(f"the socket path {place.socket} is longer than a Unix socket allows")
    try:
        os.makedirs(place.directory, mode=0o700, exist_ok=True)
        found = os.lstat(place.directory)
    except OSError as exc:
        raise Unusable(f"cannot use the directory {place.directory}: {exc}") from exc
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.geteuid():
        raise Unusable(f"{place.directory} is not a directory of this user's")
    if found.st_mode & 0o022:
        raise Unusable(f"{place.directory} is writable by other users")


def socket_flag(arguments: Sequence[str]) -> str | None:
    """`--socket S` or `--socket=S`, wherever it stands (global options go either side
    of the command word)."""
    for index, word in enumerate(arguments):
        if word == "--socket" and index + 1 < len(arguments):
            return arguments[index + 1]
        if word.startswith("--socket="):
            return word.partition("=")[2]
    return None


def peer_uid(sock: _socket.socket) -> int | None:
    """The uid of the process at the other end of `sock` (a server of another uid could
    read every call); None where the platform cannot tell, and the private directory
    (`ensure_private`) still guards the socket. `coordd_wire.peercred.peer_uid` in
    `_socket` alone: `socket` and `struct` would cost a relay more than its own work."""
    if hasattr(_socket, "SO_PEERCRED"):  # Linux: struct ucred {pid, uid, gid}
        creds = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    elif sys.platform == "darwin":  # LOCAL_PEERCRED: struct xucred {version, uid, ...}
        creds = sock.getsockopt(0, 1, 76)  # SOL_LOCAL, LOCAL_PEERCRED
    else:
        return None
    return int.from_bytes(creds[4:8], sys.byteorder)

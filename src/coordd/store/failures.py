"""Why a daemon cannot start on its store (exit 1), or must stop serving it (exit 74).

Kept free of any driver import: the CLI names these whatever the backend.
"""

from __future__ import annotations


class StoreUnavailable(Exception):
    """The team store (PostgreSQL) cannot be reached or used at start."""


class NodeInUse(Exception):
    """Another live daemon already runs under this node name on the team store."""


class DiskFault(Exception):
    """The disk failed a write of the store while serving: the daemon exits to recover.

    Raised out of `Daemon.run` after the drain; `coordd serve` then exits
    `EXIT_DISK_FAULT` without closing the write connection, so that nothing
    is checkpointed from a page cache it no longer trusts and the next start
    recovers from the WAL (docs/ARCHITECTURE.md, "After a disk error").
    """


class StoreDamaged(Exception):
    """The integrity check run beside serving found the SQLite file damaged; the daemon
    refused every write since, and now stops (exit 1) the way it does after a
    `DiskFault`: without closing the write connection, whose close would checkpoint
    the WAL into the damaged file (`store.store_check`)."""


#: `coordd serve`'s exit status after a `DiskFault`: sysexits' EX_IOERR. Not 0, so
#: systemd (Restart=on-failure) and launchd (KeepAlive SuccessfulExit=false) restart it.
EXIT_DISK_FAULT = 74

"""Why a daemon cannot start on its store, in terms `coordd serve` reports (exit 1).

Kept free of any driver import: the CLI names these whatever the backend.
"""

from __future__ import annotations


class StoreUnavailable(Exception):
    """The team store (PostgreSQL) cannot be reached or used at start."""


class NodeInUse(Exception):
    """Another live daemon already runs under this node name on the team store."""

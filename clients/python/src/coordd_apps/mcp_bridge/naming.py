"""Who the MCP server acts as, and for which board: `identity.identify`, one last resort apart.

Rules 1-6 of the identity rule are the CLI's and the hooks' (an explicit
`--agent`, `$COORD_AGENT`, a Cursor window's folder, the tab registry, the
host's session id), so a tab's MCP calls, shell calls and hooks are one
agent. They are asked again on every call: the tab registry may gain this
tab's record after the server started (Codex starts MCP servers before its
session-start hook has run). When none applies, the server is named from the
MCP client's name (`clientInfo`), the host process that started it and its
own process: stable for this server's life, distinct from every other.

The project is `identity.host_project`'s, as for the hooks: `--project` or
`$COORD_PROJECT`, else the board of `$CLAUDE_PROJECT_DIR`, else that of the
working directory.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping

from coordd_client import tabs
from coordd_client.identity import Resolved, identify, process_name_and_start, slug


def mcp_agent(
    env: Mapping[str, str],
    client_name: str | None,
    host: str | None,
    process: int | None = None,
) -> Resolved:
    """`process` is the tab's own `coord mcp` process (its relay, when the shared server
    asks; default: this process): its ancestry finds the tab, and it and its parent
    name a server with no other name."""
    found = identify(environ=env, host=host, process=process)
    if found is not None:
        return found
    own = os.getpid() if process is None else process
    known = None if process is None else tabs.process(process)
    parent = os.getppid() if known is None else known.parent
    _, started = process_name_and_start(parent)
    digest = hashlib.sha1(f"{parent}:{started}:{own}".encode()).hexdigest()[:4]
    name = slug(client_name or "mcp")
    return Resolved(
        f"{name}-{parent}-{digest}",
        f"this MCP server (client {client_name or 'unnamed'}, host process {parent})",
    )

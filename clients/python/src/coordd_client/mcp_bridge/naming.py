"""Who the MCP server acts as, and for which board: the CLI's rule, one last resort apart.

`$COORD_AGENT`, then the host's session or thread id (`CLAUDE_CODE_SESSION_ID`
gives `claude-<12 hex>`, exactly as the CLI derives it, so a tab's MCP calls,
shell calls and hooks are one agent; `CODEX_THREAD_ID` gives `codex-...`
where the host passes it). Otherwise the CLI would use its terminal session,
which an MCP server has none of: it is named from the MCP client's name
(`clientInfo`), the host process that started it and its own process, so it
is stable for this server's life and distinct from every concurrent one.

The project is `identity.host_project`'s, as for the hooks: `$COORD_PROJECT`,
else the board of `$CLAUDE_PROJECT_DIR`, else that of the working directory.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping

from coordd_client.identity import (
    Resolved,
    agent_from_environment,
    process_name_and_start,
    slug,
)


def mcp_agent(env: Mapping[str, str], client_name: str | None) -> Resolved:
    found = agent_from_environment(env)
    if found is not None:
        return found
    host = os.getppid()
    _, started = process_name_and_start(host)
    digest = hashlib.sha1(f"{host}:{started}:{os.getpid()}".encode()).hexdigest()[:4]
    name = slug(client_name or "mcp")
    return Resolved(
        f"{name}-{host}-{digest}",
        f"this MCP server (client {client_name or 'unnamed'}, host process {host})",
    )

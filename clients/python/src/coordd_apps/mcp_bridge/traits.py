"""What every tool module shares: the annotations hosts read, and how long a tool waits.

Apart from `tools` so that each tool module (`tools`, `message_tools`,
`slot_tools`, `landing_tools`) imports these from below instead of from one
another.
"""

from __future__ import annotations

from mcp.types import ToolAnnotations

#: A waiting tool returns within this many seconds (hosts time tool calls out).
MAX_WAIT_S = 50.0
#: While it waits, it reports progress this often (to a caller that asked for it).
PROGRESS_EVERY_S = 5.0

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
RETRY_SAFE = ToolAnnotations(destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(destructive_hint=False, idempotent_hint=False, open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(destructive_hint=True, idempotent_hint=False, open_world_hint=False)

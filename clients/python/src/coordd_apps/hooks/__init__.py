"""`coord hook ...`: the commands hosts run at session start, before an edit, when a tab
goes idle, at session end, and git runs before a commit.

Each reads the host's JSON from stdin, names the agent exactly as the MCP
server and the CLI do, talks to the daemon through the socket, and answers
in the host's own output shape. None of them may brick an agent: when the
board cannot be reached a guard allows, and says so where the model and its
user read (`hooks/guard.py`), unless the repository's `.coord/config.json` says
`"unreachable": "deny"` or `COORD_GUARD_STRICT=1`.
"""

"""`coord mcp` as a tab starts it: a thin stdio relay to one shared MCP server per user.

A host starts one `coord mcp` per tab, and the MCP SDK costs about a second
and 65 MiB to import (issue 32). So the process a tab starts is a relay of
the standard library only (`relay.py`): it finds or starts the shared server
(`place.py` names its socket), tells it who the tab is, and copies lines
between the tab's stdio and that socket. The shared server
(`coordd_apps.mcp_bridge.shared`) loads the SDK once and runs each relay's
connection as an MCP session of its own. `lines.py` is the bounded line
reader both sides use.

Nothing here may import the SDK, pydantic, trio, anyio or msgspec:
`tests/system/test_mcp_relay.py` counts what the relay loads.
"""

"""`coord mcp`: the board as MCP tools, for Claude Code, Codex, Cursor and any MCP host.

Built on the official SDK (`mcp`, the `mcp` extra), run under trio. It is a
client like any other: every tool is one or a few protocol calls through the
daemon's socket (`link.py`), never the database. Importing this package
imports the SDK, so only `coord mcp` does.
"""

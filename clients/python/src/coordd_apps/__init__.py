"""The apps of coordd: the `coord` command and what it runs (the CLI, the hooks,
the quick path, the MCP relay and bridge, `coord setup`, `coord doctor`, `coord
top`, `coord web`, `coord land`), and the wording only they use.

This package imports nothing: `coordd_apps.entry` is the `coord` console script,
and the quick relay and `coord mcp`'s relay it hands a command to must stay as
cheap as the standard library (tests/system/test_hook_imports.py and
test_mcp_relay.py count their modules). The apps import the library
(`coordd_client`) and the wire (`coordd_wire`); nothing imports an app but an app
(docs/ARCHITECTURE.md, "The layers, and which may import which").
"""

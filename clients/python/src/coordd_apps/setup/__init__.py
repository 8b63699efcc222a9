"""`coord setup`: register the MCP server, the hooks and the instructions in a host's
configuration, merged into what is there, undone exactly by `--remove`."""

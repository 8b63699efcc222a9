"""The wire contract both sides share: framing, error codes, wire types, socket paths.

The daemon (`coordd`), the client library (`coordd_client`) and the apps
(`coordd_apps`) import these modules; they import nothing of ours, so the daemon
never loads a client. Only msgspec and the standard library are used here
(PROTOCOL.md sections 1 to 4). This `__init__` imports nothing: the quick relay and
`coord mcp`'s relay read `coordd_wire.location` through it (issue 45 item 2).
"""

"""The wire contract both sides share: framing, error codes, wire types, socket paths.

The daemon and every client import these modules and nothing else of
`coordd_client`, so the daemon never loads a client. Only msgspec and the
standard library are used here (PROTOCOL.md sections 1 to 4).
"""

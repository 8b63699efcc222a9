"""The `coord` command's entry point: `coord mcp` becomes the relay before the CLI loads.

A host starts `coord mcp` once per tab and waits for its tool list; the
CLI's own imports (its parser, the client, autostart) cost several times a
bare interpreter's start, so the word `mcp` is looked for here first and
goes to `coordd_client.mcp_relay.relay`, which loads the standard library
only. Every other command goes to `coordd_client.cli.main` as before.
"""

from __future__ import annotations

import sys

from coordd_client.argv import command_of

TYPE_CHECKING = False  # `typing` and `collections.abc` cost the relay's start
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if command_of(arguments) == "mcp":
        from coordd_client.mcp_relay.relay import main as relay

        return relay(arguments)
    from coordd_client.cli import main as cli

    return cli(arguments)

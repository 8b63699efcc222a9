"""The `coord` command's entry point: `coord mcp` becomes the relay before the CLI loads.

A host starts `coord mcp` once per tab and waits for its tool list; the
CLI's own imports (its parser, the client, autostart) cost several times a
bare interpreter's start, so the word `mcp` is looked for here first and
goes to `coordd_client.mcp_relay.relay`, which loads the standard library
only. Every other command goes to `coordd_client.cli.main` as before.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # `typing` and `collections.abc` cost the relay's start
if TYPE_CHECKING:
    from collections.abc import Sequence

#: Global options that take a value (`cli.registry.global_options`): `--socket S mcp`.
VALUED = frozenset({"--socket", "--agent", "--project"})


def command_of(arguments: Sequence[str]) -> str | None:
    """The command word in `arguments` (the first word that is neither an option nor
    an option's value), or None."""
    words = iter(arguments)
    for word in words:
        if word in VALUED:
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if command_of(arguments) == "mcp":
        from coordd_client.mcp_relay.relay import main as relay

        return relay(arguments)
    from coordd_client.cli import main as cli

    return cli(arguments)

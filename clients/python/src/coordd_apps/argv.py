"""The command word of a `coord` command line, found with the standard library alone.

Both the entry point (`coord mcp` goes to the relay before the CLI loads) and the
CLI (`coord hook` skips argparse) ask it before anything else is imported, so it
lives here, below both, rather than in either (it was in `entry`, which the CLI
then imported back).
"""

from __future__ import annotations

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

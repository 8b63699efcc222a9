"""The `coord` command's entry point: what can skip the CLI's imports does, before they load.

The CLI's own imports (its parser, the client, autostart) cost several times a
bare interpreter's start, so the command word is looked for here first:
`coord mcp` goes to `coordd_apps.mcp_relay.relay` (one tab's MCP relay), and
an everyday command or hook to `coordd_apps.quick.relay`, which hands it to a
warm server of this user's (issue 46); both load the standard library only.
Every other command, and a quick one no server took, goes to
`coordd_apps.cli.main` as before.
"""

from __future__ import annotations

import os
import sys

from coordd_apps.argv import command_of

TYPE_CHECKING = False  # `typing` and `collections.abc` cost the relay's start
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    command = command_of(arguments)
    if command == "mcp":
        from coordd_apps.mcp_relay.relay import main as relay

        return relay(arguments)
    if os.environ.get("COORD_QUICK", "") != "0":  # off: not even the relay's imports
        from coordd_apps.quick import relay as quick

        if quick.wanted(arguments, command):
            place = quick.place_of(arguments)
            answered = quick.try_quick(arguments, place)
            if answered is not None:
                return answered
            if quick.required():
                sys.stderr.write(
                    f"coord: no quick server at {place.socket} (COORD_QUICK=require)\n"
                )
                return 1
            try:
                return _in_process(arguments)
            finally:
                quick.start_server(place)  # for the next call
    return _in_process(arguments)


def _in_process(arguments: list[str]) -> int:
    from coordd_apps.cli import main as cli

    return cli(arguments)

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
    _closed_streams_to_null()
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


def _closed_streams_to_null() -> None:
    """A standard descriptor closed at start (`coord ls >&-`) is /dev/null here, as the
    shell user meant: the CLI writes to `sys.stdout` (None in such a process, a
    traceback at the first write), and a socket opened later must not take its number
    (the quick relay would hand its own connection over as the caller's stdout)."""
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        if getattr(sys, name) is None:
            null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
            if null != fd:  # the lowest free number: `fd` itself unless a lower one is free
                os.dup2(null, fd)
                os.close(null)
            setattr(sys, name, open(fd, mode, closefd=False))  # noqa: SIM115

"""Each `coord` command declared once: name, help, example, arguments and handler.

A command module decorates its handler with `@command(...)`; `build_parser`
turns the registry into argparse sub-commands in declaration order. Nothing
else lists the commands, so adding one is one function in one module.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

from coordd_apps.cli.context import Context


class UsageError(Exception):
    """Bad arguments: exit 1 (and a JSON error with --json), never argparse's 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # `coord: claim: ...`: the error line already starts with `coord: `.
        command = self.prog.removeprefix("coord").strip()
        raise UsageError(f"{command}: {message}" if command else message)


@dataclass(frozen=True)
class Arg:
    """One `add_argument` call, kept until the parser is built."""

    flags: tuple[str, ...]
    options: dict[str, Any]

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(*self.flags, **self.options)


def arg(*flags: str, **options: Any) -> Arg:
    """Declare an argument exactly as `ArgumentParser.add_argument` takes it."""
    return Arg(flags, options)


Handler = Callable[[Context], int]


@dataclass(frozen=True)
class Command:
    name: str
    summary: str
    example: str
    handler: Handler
    args: tuple[Arg, ...] = field(default=())


#: Every command, in the order `coord --help` lists them.
COMMANDS: dict[str, Command] = {}


def command(name: str, summary: str, example: str, *args: Arg) -> Callable[[Handler], Handler]:
    """Register `handler` as `coord NAME`; its exit code is what the handler returns."""

    def register(handler: Handler) -> Handler:
        if name in COMMANDS:
            raise ValueError(f"coord {name} is declared twice")
        COMMANDS[name] = Command(name, summary, example, handler, args)
        return handler

    return register


def global_options() -> Parser:
    """Options every command takes, before or after its name."""
    # SUPPRESS: a sub-command's copy does not overwrite a value given before the command.
    common = Parser(add_help=False)
    common.add_argument("--socket", default=argparse.SUPPRESS, help="daemon socket path")
    common.add_argument("--agent", default=argparse.SUPPRESS, help="who you are ($COORD_AGENT)")
    common.add_argument("--project", default=argparse.SUPPRESS, help="project ($COORD_PROJECT)")
    common.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="JSON output"
    )
    common.add_argument(
        "--no-start",
        action="store_true",
        default=argparse.SUPPRESS,
        help="do not start a daemon if none answers ($COORD_NO_AUTOSTART=1)",
    )
    return common


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    for distribution in ("coordd-client", "coordd"):
        try:
            return version(distribution)
        except PackageNotFoundError:
            continue
    return "unknown"


class _Version(argparse.Action):
    """`--version`, looked up only when asked: `importlib.metadata` (and the `email`
    package it parses metadata with) cost every `coord` call tens of modules and a
    quarter of a hook's start, for an answer almost no call wants (issue 32)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> NoReturn:
        sys.stdout.write(f"coord {package_version()}\n")  # where argparse's own prints it
        parser.exit()


#: Parsers built, by description and the commands registered then. A one-shot `coord`
#: builds one; the quick server (`coordd_apps.quick.server`) builds it before it
#: forks, so each call's child parses with it instead of spending most of its time
#: building it again (argparse keeps no state of a parse in the parser).
_BUILT: dict[tuple[str, tuple[str, ...]], Parser] = {}


def build_parser(description: str) -> Parser:
    """The parser of every command registered so far (built once per set of commands)."""
    key = (description, tuple(COMMANDS))
    built = _BUILT.get(key)
    if built is None:
        built = _BUILT[key] = _build_parser(description)
    return built


def _build_parser(description: str) -> Parser:
    common = global_options()
    parser = Parser(
        prog="coord",
        parents=[common],
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version, help="show program's version number and exit")
    subcommands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=Parser
    )
    for spec in COMMANDS.values():
        sub = subcommands.add_parser(
            spec.name,
            parents=[common],
            help=spec.summary,
            description=spec.summary,
            epilog=f"example:\n  {spec.example}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        for argument in spec.args:
            argument.add_to(sub)
    return parser

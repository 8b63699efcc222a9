"""The `coord` command registry: each command declared once, and parsed from its declaration."""

from __future__ import annotations

import pytest

from coordd_client.cli import WORKFLOW
from coordd_client.cli.registry import COMMANDS, UsageError, build_parser, command
from coordd_client.protocol.wire import STATES


def test_every_command_has_a_summary_an_example_and_a_handler() -> None:
    assert list(COMMANDS)[:3] == ["post", "ls", "show"]  # tasks first, as --help lists them
    for spec in COMMANDS.values():
        assert spec.summary and spec.example.startswith(f"coord {spec.name}")
        assert callable(spec.handler)


def test_a_second_declaration_of_a_name_is_refused() -> None:
    with pytest.raises(ValueError, match="declared twice"):
        command("ls", "again", "coord ls")(lambda ctx: 0)


def test_the_parser_is_built_from_the_declarations() -> None:
    parser = build_parser(WORKFLOW)
    args = parser.parse_args(["renew", "42", "--fence", "3", "--lease", "90", "--json"])
    assert (args.command, args.id, args.fence, args.lease, args.json) == ("renew", 42, 3, 90, True)
    assert parser.parse_args(["ls", "--state", STATES[-1]]).state == [STATES[-1]]
    with pytest.raises(UsageError, match="invalid choice"):
        parser.parse_args(["ls", "--state", "sleeping"])

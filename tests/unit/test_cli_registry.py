"""The `coord` command registry: each command declared once, and parsed from its declaration."""

from __future__ import annotations

from pathlib import Path

import pytest

from coordd_apps.cli import WORKFLOW, load_groups
from coordd_apps.cli.registry import COMMANDS, UsageError, build_parser, command
from coordd_wire.wire import STATES

load_groups()


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


def test_a_hook_loads_its_group_only() -> None:
    """A host runs `coord hook` before every edit: it imports what hooks need, not the
    other groups (setup, top, mcp's launchers). Counted, not timed."""
    import subprocess
    import sys

    probe = (
        "import sys; from coordd_apps import cli; cli.load_groups(cli._groups_for(sys.argv[1:]));"
        " print(sorted(m for m in sys.modules if m.startswith('coordd_apps.')))"
    )
    hook = subprocess.run(
        [sys.executable, "-c", probe, "--socket", "/s", "hook", "pre-edit"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    every = subprocess.run(
        [sys.executable, "-c", probe, "ls"], capture_output=True, text=True, check=True
    ).stdout
    assert "coordd_apps.cli.hooks" in hook and "coordd_apps.cli.setup" not in hook
    assert "coordd_apps.setup.apply" not in hook and "coordd_apps.cli.top" not in hook
    assert "coordd_apps.cli.setup" in every
    assert hook.count("coordd_apps.") < every.count("coordd_apps.")


def test_coord_help_and_the_readme_say_the_same_thing() -> None:
    """`coord --help` and the README's first paragraph describe one product (issue 47 item 11)."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    first = " ".join(readme.split("\n\n")[1].split())
    help_text = " ".join(WORKFLOW.split("A typical turn")[0].split())
    for phrase in (
        "parallel AI coding",
        "(Claude Code, Codex and Cursor tabs side by side",
        "coordinate",
    ):
        assert phrase in first and phrase in help_text, phrase
    assert "exactly one wins" in first and "exactly one wins" in help_text


def test_coord_help_says_a_terminal_is_the_human() -> None:
    """Found in review (issue 47 item 1): `coord --help` said a terminal gets "one name
    per terminal session", the rule before the person was one agent; a terminal is
    human-<user>, as the README, docs/USING.md and `coord whoami` say."""
    flat = " ".join(WORKFLOW.split())
    assert "on a terminal you, human-<user>" in flat
    assert "per terminal session" not in flat

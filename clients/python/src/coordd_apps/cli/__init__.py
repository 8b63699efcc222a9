"""`coord`: the command line agents call from their shells.

Exit codes (agents branch on them): 0 success, 1 error, 2 `wait` timed out,
3 lost (a claim answered `won: false`, or `lease_lost`), 4 nothing to claim.
With `--json`, stdout carries exactly one JSON document per result (events
as JSON lines for `watch`), errors included.

Each command lives in the module of its group and is declared once there
(`registry.command`); importing the modules below registers them, in the
order `COMMAND_GROUPS` gives. `coord hook ...` loads its own group only: a
host runs it before every edit of every tab, and the other groups' imports
(setup, the TUI's and MCP's launchers, paging) are time it would pay for
nothing (issue 32; `test_a_hook_loads_its_group_only` counts the modules). A
plain `coord hook EVENT ...` does not even build the parser: `hooks.entry` reads it
(`bench/hooks.py` times it).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Sequence

# Nothing else at the top: `coord hook` (`hooks.entry`) must not pay for argparse, the
# registry or the CLI's context, so `main` imports them once it knows it needs them.
from coordd_apps.argv import command_of  # the standard library only, like this module

#: The command groups, in the order `coord --help` lists their commands.
COMMAND_GROUPS = (
    "tasks",
    "waiting",
    "leases",
    "reservations",
    "messages",  # issue 34: msg, inbox, request, answer
    "slots",  # issue 35: slot, port
    "landing",  # issue 35: land
    "prime",
    "agents",
    "status",
    "mcp",
    "hooks",
    "setup",
    "doctor",
    "top",
    "web",
    "export",
    "cost",  # issue 48: the token ledger
)
#: The groups `coord hook ...` needs (its own); everything else loads them all.
HOOK_GROUPS = ("hooks",)


def load_groups(groups: Sequence[str] = COMMAND_GROUPS) -> None:
    """Register the commands of `groups` (importing a group twice is a no-op)."""
    for group in groups:
        importlib.import_module(f"coordd_apps.cli.{group}")


def _groups_for(arguments: Sequence[str]) -> Sequence[str]:
    """The groups the command named in `arguments` needs."""
    if command_of(arguments) == "hook" and "--help" not in arguments:
        return HOOK_GROUPS
    return COMMAND_GROUPS


WORKFLOW = """\
coord: the board through which parallel AI coding agents (Claude Code, Codex and
Cursor tabs side by side) coordinate: post work, claim it (when several reach for
one task at once, exactly one wins), reserve files, talk. A typical turn:

  coord post "Parser crashes on empty input" -k bug -t parser    # report work
  coord next -k bug                 # claim the most urgent bug   (exit 4: none left)
  coord claim 42                    # or claim one task           (exit 3: someone else won)
  coord done 42 -r "fixed in abc123" --ack "parser fix landed"   # finish and announce it
  coord wait -k ack --title-contains parser --timeout 600        # block until it happens
                                                                  (exit 2: timed out)
  coord ls                          # the board for this project
  coord heartbeat                   # keep your claims alive on long work (leases: 600 s)

Identity: --agent, else $COORD_AGENT, else in a Claude Code or Codex tab the tab's one
name, else on a terminal you, human-<user> (as in coord top and coord web), else one
name per session (cron, a script); coord whoami shows it (docs/USING.md).
Project: --project, else $COORD_PROJECT, else the main worktree of the git repository
you are in (its worktrees share one board), else the directory itself.
--json prints exactly one JSON document per result.
Exit codes: 0 ok, 1 error, 2 wait timed out, 3 lost, 4 nothing to claim.
"""


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    groups = _groups_for(arguments)
    json_mode = "--json" in arguments
    if groups is HOOK_GROUPS:
        from coordd_apps.hooks import entry

        answered = _answer(json_mode, lambda: entry.main(arguments))
        if answered is not None:
            return answered
    load_groups(groups)
    from coordd_apps.cli.context import EXIT_ERROR, Context, emit_error
    from coordd_apps.cli.registry import COMMANDS, UsageError, build_parser
    from coordd_client.autostart import autostart_enabled
    from coordd_client.discovery import SocketRoute
    from coordd_wire.errors import INVALID_PARAMS

    try:
        args = build_parser(WORKFLOW).parse_args(arguments)
    except UsageError as exc:
        emit_error(json_mode, INVALID_PARAMS, str(exc), {"kind": "usage"})
        return EXIT_ERROR
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    json_mode = bool(getattr(args, "json", False))
    ctx = Context(
        args=args,
        json=json_mode,
        route=SocketRoute.resolve(getattr(args, "socket", None)),
        autostart=autostart_enabled(bool(getattr(args, "no_start", False))),
    )
    answer = _answer(json_mode, lambda: COMMANDS[args.command].handler(ctx))
    assert answer is not None  # a registered handler always returns its exit code
    return answer


def _answer(json_mode: bool, handler: Callable[[], int | None]) -> int | None:
    """`handler`'s exit code, with every error a command can end in mapped to its own
    (the same for a hook on the fast path and for any command parsed by argparse)."""
    from coordd_wire.errors import CoordError, LeaseLost

    try:
        return handler()
    except CoordError as exc:
        from coordd_apps.cli.context import EXIT_ERROR, EXIT_LOST, emit_error
        from coordd_apps.cli.plain import plain_message

        emit_error(json_mode, exc.code, plain_message(exc), exc.data)
        return EXIT_LOST if isinstance(exc, LeaseLost) else EXIT_ERROR
    except BrokenPipeError:
        # `coord watch | head`: the reader is gone; leave quietly, and keep
        # Python from complaining when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 1
    except Exception as exc:
        from coordd_apps.cli.registry import UsageError

        if not isinstance(exc, UsageError):
            raise
        from coordd_apps.cli.context import EXIT_ERROR, emit_error
        from coordd_wire.errors import INVALID_PARAMS

        emit_error(json_mode, INVALID_PARAMS, str(exc), {"kind": "usage"})
        return EXIT_ERROR

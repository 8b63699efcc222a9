"""`coord hook EVENT`: what the hosts (and git) run; `coord setup` registers them.

A hook never bricks an agent: any failure of its own is reported on stderr
and the host proceeds (exit 0), except where blocking is the point.

One invocation is an `Invocation`, built by `hooks.entry` (the fast path a
host's every edit takes, with no argparse and no CLI registry) or by the
argparse command in `cli/hooks.py` (`--help`, abbreviations); both run it here,
so the two spellings cannot drift apart.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import msgspec

from coordd_apps.hooks import guard, respond
from coordd_apps.hooks.payload import HookInput, Host, read
from coordd_client.discovery import SocketRoute
from coordd_wire.errors import CoordError

EVENTS = ("session-start", "pre-edit", "post-tool", "wake", "session-end", "pre-commit", "deliver",
          "turn-end")  # fmt: skip
#: `COORD_ALLOW_RESERVED=1` lets one commit of reserved files through.
ALLOW_RESERVED_ENV = "COORD_ALLOW_RESERVED"
#: The wake hook exits 0 after this long (its host's timeout must be longer).
DEFAULT_WAKE_S = 3300.0
#: What `run` returns when the hook lets the host go on.
EXIT_OK = 0


class Invocation(msgspec.Struct):
    """One `coord hook` call: its event, its options, and where the daemon is."""

    event: str
    host: Host | None
    max_wait_s: float
    #: `--agent` and `--project` (None: not given).
    agent: str | None
    project: str | None
    route: SocketRoute
    #: `--no-start` (autostart also honours `$COORD_NO_AUTOSTART`).
    no_start: bool
    _socket: Path | None = None

    @property
    def socket(self) -> Path:
        """The socket to use (`SocketRoute.locate`), looked up once, on first use: a
        pre-edit of a tool that edits nothing never reaches the daemon."""
        if self._socket is None:
            # Only session start starts a daemon before its first call (the wake hook
            # starts one only when the daemon it waited on went: `wake_link`).
            starts = self.event == "session-start" and self.autostart
            self._socket = self.route.locate(may_start=starts)
        return self._socket

    @property
    def autostart(self) -> bool:
        # Imported here: only session start and the wake hook may start a daemon, and the
        # edit guard should not pay for the autostart module's imports.
        from coordd_client.autostart import autostart_enabled

        return autostart_enabled(self.no_start)


def run(call: Invocation) -> int:
    event = call.event
    if event == "pre-commit":
        return _pre_commit(call)
    given = read(sys.stdin.read(), call.host, agent=call.agent, project=call.project)
    try:
        if event == "session-start":
            return _session_start(call, given)
        if event == "pre-edit":
            return _pre_edit(call, given)
        if event in ("post-tool", "deliver"):
            return _during_turn(call, given)
        if event == "wake":
            return _wake(call, given)
        if event == "turn-end":
            _report_usage(call, given)  # a budget crossed is told at the next prompt
            return EXIT_OK  # Stop (Codex): silent, so the turn ends as it would have
        return _session_end(call, given)
    except CoordError as exc:
        sys.stderr.write(f"coord hook {event}: {exc.message} (the session goes on)\n")
    return EXIT_OK


def _session_start(call: Invocation, given: HookInput) -> int:
    from coordd_apps.hooks import context, reported, session

    gone = session.register_tab(given)
    agent, project = given.agent.value, given.project.value
    try:
        socket = call.socket  # may refuse: several boards live, and none was named
        text = context.session_start_context(
            socket,
            agent,
            project,
            autostart=call.autostart,
            host=given.host,
            derived=not call.route.explicit,
        )
    except CoordError as exc:
        reported.told_unreachable(agent)  # the context says so: the turn's hooks need not
        return respond.context(
            given.host, context.unavailable(exc, agent, project, host=given.host)
        )
    reported.reached_board(agent)
    session.report_ended(socket, agent, gone)  # tabs that exited without their hook
    return respond.context(given.host, text)


def _pre_edit(call: Invocation, given: HookInput) -> int:
    if not given.paths:
        return respond.allow(given.host)  # a tool that edits nothing: no daemon, no git
    from coordd_apps.hooks import edits

    verdict = edits.protect(lambda: call.socket, given)
    if verdict.unreachable is not None:
        from coordd_apps.hooks import reported

        reported.told_unreachable(given.agent.value)  # the post-tool hook need not repeat it
    if verdict.allowed:
        note = verdict.reason if verdict.unreachable else ""
        return respond.allow(given.host, note, verdict.context)
    return respond.deny(given.host, f"coord: {verdict.reason}")


def _during_turn(call: Invocation, given: HookInput) -> int:
    """`post-tool` (what a tool did, recorded: issue 33) and `deliver` (unread messages
    into the turn's context: issue 34). Both say once per outage that the board cannot
    be reached, where the host shows the model (`reported.py`); Cursor's file events
    carry no context, and its `stop` would start a turn just to say it: stderr there."""
    from coordd_apps.hooks import deliver, reported

    agent = given.agent.value
    failure: CoordError | None = None
    text = said = ""
    if call.event == "post-tool":
        from coordd_apps.hooks import post_tool

        failure, said = post_tool.record(lambda: call.socket, given)
        if given.host == "cursor":
            return respond.PROCEED
    if failure is None:
        try:
            text = "\n".join(t for t in (said, deliver.deliver(call.socket, agent)) if t)
        except CoordError as exc:
            failure = exc
    if failure is None:
        reported.reached_board(agent)
    elif given.host != "cursor" and reported.first_unreachable_notice(agent):
        text = reported.unreachable_notice(failure)
    if _report_usage(call, given):  # a budget crossed: said in the turn's context
        from coordd_apps.hooks import usage

        text = "\n".join(t for t in (text, usage.take_notices(agent)) if t)
    return deliver.respond(given, text)


def _report_usage(call: Invocation, given: HookInput) -> bool:
    """Issue 48: what is new in the host's transcript, to the token ledger; whether a
    budget notice waits for the model. Never raises, and changes nothing else the hook
    answers; imported only when there is a transcript."""
    if not isinstance(given.raw.get("transcript_path"), str):
        return False
    from coordd_apps.hooks import usage

    usage.report_new_usage(lambda: call.socket, given)
    return usage.has_notices(given.agent.value)


def _session_end(call: Invocation, given: HookInput) -> int:
    from coordd_apps.hooks import session
    from coordd_apps.wording.advice import plural  # here: the other hooks never say a count

    _report_usage(call, given)  # the session's last turn, before its claims are given back
    if not session.tab_ends(given):
        return EXIT_OK  # `/clear`: the same tab goes on, under the same name
    ended = session.end_session(call.socket, given.agent.value, given.project.value)
    sys.stderr.write(
        f"coord: {given.agent.value} released {plural(ended.claims, 'claim')} and"
        f" {plural(ended.reservations, 'reservation')}, and unassigned"
        f" {plural(ended.unassigned, 'pending task')}\n"
    )
    return EXIT_OK


def _wake(call: Invocation, given: HookInput) -> int:
    from coordd_apps.hooks import wake

    _report_usage(call, given)  # Stop: the turn just ended, before the wait begins
    unattended = wake.unattended()
    if unattended is not None:
        sys.stderr.write(f"coord hook wake: {unattended}; not waiting\n")
        return EXIT_OK
    try:
        message = wake.wait_for_assignment(
            call.socket,
            given.agent.value,
            given.project.value,
            call.max_wait_s,
            autostart=call.autostart,  # the daemon may go while it waits: start it again
            derived=not call.route.explicit,
        )
    except CoordError as exc:
        sys.stderr.write(f"coord hook wake: {exc.message}; not waiting\n")
        return EXIT_OK
    if message is None:
        return EXIT_OK
    # Shown to the model as it wakes, after the hook's `rewakeMessage`; no newline at
    # the end, which Claude Code would keep as a blank line before its closing tag.
    sys.stderr.write(message)
    return respond.BLOCK


def _pre_commit(call: Invocation) -> int:
    """git's pre-commit: refuse staged files another agent holds exclusively.

    git runs it at the top of the worktree being committed, with `$GIT_DIR`
    naming that worktree's repository (in a linked worktree) and
    `$GIT_INDEX_FILE` the index the commit is made of (a temporary one for
    `commit -a` and `commit PATHS`). The paths come from that index, relative
    to that top: exactly how the board names them, in every worktree. A
    rename is its old and its new name (`--no-renames`): both files change.
    """
    import subprocess

    from coordd_client.identity import resolve_agent, resolve_project

    staged = subprocess.run(
        ["git", "diff", "--cached", "--name-only", "--no-renames", "-z"],
        capture_output=True,
        encoding="utf-8",
        errors="replace",
        check=False,
    )
    if staged.returncode != 0:
        sys.stderr.write(
            f"coord pre-commit: git diff --cached failed ({staged.stderr.strip()}); allowed\n"
        )
        return EXIT_OK
    paths = {p: p for p in staged.stdout.split("\0") if p}
    # --agent and --project win, as everywhere
    agent, project = resolve_agent(call.agent).value, resolve_project(call.project).value
    try:
        socket = call.socket  # may refuse: several boards live, and none was named
    except CoordError as exc:
        verdict = guard.cannot_check(exc, [project]) if paths else guard.Verdict(True, "")
    else:
        verdict = guard.check_board_paths(socket, paths, agent=agent, project=project)
    if verdict.allowed:
        if verdict.unreachable:  # git shows it; an agent's shell tool shows it the model
            sys.stderr.write(f"coord pre-commit: {verdict.reason}\n")
        return EXIT_OK
    if os.environ.get(ALLOW_RESERVED_ENV) == "1":
        sys.stderr.write(f"coord pre-commit: {ALLOW_RESERVED_ENV}=1, committing anyway: "
                         f"{verdict.reason}\n")  # fmt: skip
        return EXIT_OK
    sys.stderr.write(_refusal(verdict, agent))
    return 1


def _refusal(verdict: guard.Verdict, agent: str) -> str:
    """Why git's pre-commit refuses, and how to commit anyway, once."""
    if verdict.unreachable is not None:
        return (
            f"coord pre-commit: refused: {verdict.reason}\n(override once with"
            f" {guard.STRICT_ENV}=0 git commit ...)\n"
        )
    if verdict.wrong_board:
        return f"coord pre-commit: refused: {verdict.reason}\n"
    return (
        f"coord pre-commit: refused, you ({agent}) are committing files another agent"
        f" reserved: {verdict.reason}\n(override once with {ALLOW_RESERVED_ENV}=1 git commit ...)\n"
    )

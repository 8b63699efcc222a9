"""`coord`: the command line agents call from their shells.

Exit codes (agents branch on them): 0 success, 1 error, 2 `wait` timed out,
3 lost (a claim answered `won: false`, or `lease_lost`), 4 nothing to claim.
With `--json`, stdout carries exactly one JSON document per result (events
as JSON lines for `watch`), errors included.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import msgspec

from coordd_client import render
from coordd_client.autostart import autostart_enabled, connect
from coordd_client.client import Client
from coordd_client.identity import default_agent
from coordd_client.protocol.errors import CoordError, DaemonUnavailable, LeaseLost
from coordd_client.protocol.paths import default_socket_path

EXIT_OK, EXIT_ERROR, EXIT_TIMEOUT, EXIT_LOST, EXIT_EMPTY = 0, 1, 2, 3, 4
PROJECT_ENV = "COORD_PROJECT"
#: `wait` without --timeout blocks in chained waits of this many seconds (the protocol's maximum).
LONGEST_WAIT_S = 3600.0

WORKFLOW = """\
The bulletin board for agents working side by side. A typical turn:

  coord post "Parser crashes on empty input" -k bug -t parser    # report work
  coord next -k bug                 # claim the most urgent bug   (exit 4: none left)
  coord claim 42                    # or claim one task           (exit 3: someone else won)
  coord done 42 -r "fixed in abc123" --ack "parser fix landed"   # finish and announce it
  coord wait -k ack --title-contains parser --timeout 600        # block until it happens
                                                                  (exit 2: timed out)
  coord ls                          # the board for this project
  coord heartbeat                   # keep your claims alive on long work (leases: 600 s)

Identity: --agent, else $COORD_AGENT (set one per tab: export COORD_AGENT=claude-tab-2),
else a default that is stable for one agent session (see README).
Project: --project, else $COORD_PROJECT, else the git top level of the current
directory, else "default". --json prints exactly one JSON document per result.
Exit codes: 0 ok, 1 error, 2 wait timed out, 3 lost, 4 nothing to claim.
"""


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as exit 1 (and as JSON with --json), never 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def _global_options() -> _Parser:
    # SUPPRESS: a sub-command's copy does not overwrite a value given before the command.
    common = _Parser(add_help=False)
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


def _positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


def build_parser() -> _Parser:
    common = _global_options()
    parser = _Parser(
        prog="coord",
        parents=[common],
        description=WORKFLOW,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_Parser
    )

    def command(name: str, summary: str, example: str) -> argparse.ArgumentParser:
        return commands.add_parser(
            name,
            parents=[common],
            help=summary,
            description=summary,
            epilog=f"example:\n  {example}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    post = command(
        "post",
        "post a task, bug, hand-off or announcement",
        'coord post "Fix flaky test_io" -k bug -p 5 -t ci',
    )
    post.add_argument("title")
    post.add_argument("-b", "--body", help="details; '-' reads them from stdin")
    post.add_argument("-k", "--kind", help="task (default), bug, ack, handoff, note, question")
    post.add_argument("-p", "--priority", type=int, help="-1000..1000, higher is more urgent")
    post.add_argument("-t", "--tag", action="append", dest="tags", help="repeatable")
    post.add_argument("--done", action="store_true", help="an announcement nobody needs to claim")
    post.add_argument("--key", help="idempotency key: posting twice with it creates one task")

    ls = command("ls", "list tasks in this project", "coord ls --state pending --state claimed")
    ls.add_argument(
        "--state", action="append", choices=["pending", "claimed", "done", "failed", "cancelled"]
    )
    ls.add_argument("--kind")
    ls.add_argument("--tag")
    ls.add_argument("--mine", action="store_true", help="only tasks you hold")
    ls.add_argument("--all-projects", action="store_true")
    ls.add_argument("--limit", type=int, default=100)
    ls.add_argument("--after", type=int, default=0, help="list ids after this one (paging)")

    show = command("show", "show one task in full", "coord show 42")
    show.add_argument("id", type=int)

    claim = command(
        "claim",
        "claim one task (exit 3 and the holder if someone else has it)",
        "coord claim 42 --lease 1800",
    )
    claim.add_argument("id", type=int)
    claim.add_argument("--lease", type=_positive_float, help="seconds (default 600)")

    nxt = command(
        "next", "claim the most urgent pending task (exit 4 if none)", "coord next -k bug -t parser"
    )
    nxt.add_argument("-k", "--kind")
    nxt.add_argument("-t", "--tag", action="append", dest="tags", help="all must match")
    nxt.add_argument("--lease", type=_positive_float)

    for name, summary in (
        ("renew", "extend your lease on a task"),
        ("release", "give a claimed task back"),
    ):
        holder = command(name, summary, f"coord {name} 42")
        holder.add_argument("id", type=int)
        holder.add_argument("--fence", type=int)
        if name == "renew":
            holder.add_argument("--lease", type=_positive_float)

    done = command(
        "done",
        "complete a task you hold",
        'coord done 42 -r "fixed in abc123" --ack "parser fix landed"',
    )
    done.add_argument("id", type=int)
    done.add_argument("-r", "--result")
    done.add_argument(
        "--ack", metavar="TITLE", help="also post a done 'ack' announcement, atomically"
    )
    done.add_argument("--fence", type=int)

    fail = command(
        "fail",
        "give up on a task you hold",
        'coord fail 42 --reason "needs a schema change" --retry',
    )
    fail.add_argument("id", type=int)
    fail.add_argument("--reason")
    fail.add_argument(
        "--retry", action="store_true", help="put it back to pending for someone else"
    )
    fail.add_argument("--fence", type=int)

    cancel = command(
        "cancel", "cancel a pending or claimed task", 'coord cancel 42 --reason "duplicate of 41"'
    )
    cancel.add_argument("id", type=int)
    cancel.add_argument("--reason")

    reopen = command("reopen", "reopen a done, failed or cancelled task", "coord reopen 42")
    reopen.add_argument("id", type=int)

    wait = command(
        "wait",
        "block until a task matches (exit 2 on timeout)",
        "coord wait -k ack --title-contains parser --timeout 600",
    )
    wait.add_argument("-k", "--kind")
    wait.add_argument("--state", choices=["pending", "claimed", "done", "failed", "cancelled"])
    wait.add_argument("-t", "--tag")
    wait.add_argument("--title-contains")
    wait.add_argument("--since-now", action="store_true", help="ignore tasks that already match")
    wait.add_argument("--timeout", type=float, help="seconds; without it, wait until a match")

    watch = command("watch", "stream events until interrupted", "coord watch --since 0")
    watch.add_argument("--since", type=int, help="replay events after this seq first")

    command("agents", "list agents, when they were last seen, what they hold", "coord agents")
    heartbeat = command("heartbeat", "renew every lease you hold", "coord heartbeat --lease 900")
    heartbeat.add_argument("--lease", type=_positive_float)
    command("status", "is a daemon running? (never starts one)", "coord status --json")
    return parser


@dataclass
class Context:
    args: argparse.Namespace
    json: bool
    socket: Path
    autostart: bool
    _agent: str | None = None
    _project: str | None = None

    @property
    def agent(self) -> str:
        if self._agent is None:
            self._agent = getattr(self.args, "agent", None) or default_agent()
        return self._agent

    @property
    def project(self) -> str:
        if self._project is None:
            self._project = (
                getattr(self.args, "project", None)
                or os.environ.get(PROJECT_ENV)
                or git_toplevel()
                or "default"
            )
        return self._project

    def client(self) -> Client:
        return connect(self.socket, autostart=self.autostart)

    def emit(self, result: Any, human: str) -> None:
        if self.json:
            sys.stdout.write(msgspec.json.encode(result).decode() + "\n")
        else:
            sys.stdout.write(human + "\n")
        sys.stdout.flush()


def git_toplevel() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


# --- commands -------------------------------------------------------------------------


def cmd_post(ctx: Context) -> int:
    args = ctx.args
    body = sys.stdin.read() if args.body == "-" else args.body
    with ctx.client() as client:
        result = client.post(
            args.title,
            body=body,
            kind=args.kind,
            project=ctx.project,
            priority=args.priority,
            tags=args.tags,
            agent=ctx.agent,
            state="done" if args.done else None,
            idempotency_key=args.key,
        )
    verb = "posted" if result.created else "already posted (same --key)"
    ctx.emit(
        result,
        f"{verb} {render.one_line(result.task)}",
    )
    return EXIT_OK


def cmd_ls(ctx: Context) -> int:
    args = ctx.args
    with ctx.client() as client:
        result = client.list_tasks(
            project=None if args.all_projects else ctx.project,
            state=args.state,
            kind=args.kind,
            tag=args.tag,
            claimed_by=ctx.agent if args.mine else None,
            after_id=args.after or None,
            limit=args.limit,
        )
    human = render.task_table(result.tasks)
    if result.next_after_id is not None:
        human += f"\n(more: coord ls --after {result.next_after_id})"
    ctx.emit(result, human)
    return EXIT_OK


def cmd_show(ctx: Context) -> int:
    with ctx.client() as client:
        result = client.get(ctx.args.id)
    ctx.emit(result, render.task_detail(result.task))
    return EXIT_OK


def cmd_claim(ctx: Context) -> int:
    with ctx.client() as client:
        result = client.claim(ctx.args.id, ctx.agent, lease_s=ctx.args.lease)
    task = result.task
    if result.won:
        ctx.emit(
            result,
            f"claimed {render.one_line(task)} as {ctx.agent}"
            f" (fence {task.fence}, lease ends {render.relative(task.lease_expires_at)})",
        )
        return EXIT_OK
    holder = f"held by {task.claimed_by}" if task.state == "claimed" else f"it is {task.state}"
    ctx.emit(result, f"lost #{task.id}: {holder}; pick something else")
    return EXIT_LOST


def cmd_next(ctx: Context) -> int:
    args = ctx.args
    with ctx.client() as client:
        result = client.claim_next(
            ctx.agent, project=ctx.project, kind=args.kind, tags=args.tags, lease_s=args.lease
        )
    if result.task is None:
        ctx.emit(result, "nothing to claim")
        return EXIT_EMPTY
    ctx.emit(
        result,
        f"claimed {render.one_line(result.task)} as {ctx.agent} (fence {result.task.fence})",
    )
    return EXIT_OK


def cmd_renew(ctx: Context) -> int:
    with ctx.client() as client:
        result = client.renew(ctx.args.id, ctx.agent, fence=ctx.args.fence, lease_s=ctx.args.lease)
    ctx.emit(
        result,
        f"renewed #{result.task.id}: lease ends {render.relative(result.task.lease_expires_at)}",
    )
    return EXIT_OK


def cmd_release(ctx: Context) -> int:
    with ctx.client() as client:
        result = client.release(ctx.args.id, ctx.agent, fence=ctx.args.fence)
    ctx.emit(result, f"released #{result.task.id}: pending again")
    return EXIT_OK


def cmd_done(ctx: Context) -> int:
    args = ctx.args
    with ctx.client() as client:
        then_post = None
        if args.ack:
            project = client.get(args.id).task.project
            then_post = {
                "title": args.ack,
                "kind": "ack",
                "state": "done",
                "project": project,
                "agent": ctx.agent,
            }
        result = client.complete(
            args.id, ctx.agent, fence=args.fence, result=args.result, then_post=then_post
        )
    human = f"done #{result.task.id}: {result.task.title}"
    if result.posted is not None:
        human += f"\nposted ack #{result.posted.id}: {result.posted.title}"
    ctx.emit(result, human)
    return EXIT_OK


def cmd_fail(ctx: Context) -> int:
    args = ctx.args
    with ctx.client() as client:
        result = client.fail(
            args.id, ctx.agent, fence=args.fence, reason=args.reason, retry=args.retry or None
        )
    ctx.emit(result, f"failed #{result.task.id}: now {result.task.state}")
    return EXIT_OK


def cmd_cancel(ctx: Context) -> int:
    with ctx.client() as client:
        result = client.cancel(ctx.args.id, agent=ctx.agent, reason=ctx.args.reason)
    ctx.emit(result, f"cancelled #{result.task.id}")
    return EXIT_OK


def cmd_reopen(ctx: Context) -> int:
    with ctx.client() as client:
        result = client.reopen(ctx.args.id, agent=ctx.agent)
    ctx.emit(result, f"reopened #{result.task.id}: pending again")
    return EXIT_OK


def cmd_wait(ctx: Context) -> int:
    args = ctx.args
    filters = {
        "project": ctx.project,
        "kind": args.kind,
        "state": args.state,
        "tag": args.tag,
        "title_contains": args.title_contains,
    }
    with ctx.client() as client:
        after_seq = client.server_info().last_seq if args.since_now else None
        remaining = args.timeout
        while True:
            chunk = LONGEST_WAIT_S if remaining is None else min(remaining, LONGEST_WAIT_S)
            result = client.wait(timeout_s=chunk, after_seq=after_seq, **filters)
            if result.task is not None:
                break
            after_seq = result.seq  # chain: nothing committed in between is missed
            if remaining is not None:
                remaining -= chunk
                if remaining <= 0:
                    break
    if result.task is None:
        ctx.emit(result, f"timed out after {args.timeout}s (seq {result.seq})")
        return EXIT_TIMEOUT
    ctx.emit(
        result,
        f"matched {render.one_line(result.task)} (seq {result.seq})",
    )
    return EXIT_OK


def cmd_watch(ctx: Context) -> int:
    ctx.client().close()  # start a daemon first if needed
    stream = Client(ctx.socket).subscribe(
        after_seq=ctx.args.since, project=getattr(ctx.args, "project", None)
    )
    try:
        for event in stream:
            line = msgspec.json.encode(event).decode() if ctx.json else render.event_line(event)
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
    except KeyboardInterrupt:
        pass
    finally:
        stream.close()
    return EXIT_OK


def cmd_agents(ctx: Context) -> int:
    with ctx.client() as client:
        result = client.agents()
    rows = [
        f"{render.clean(a.agent):<32}  last seen {render.relative(a.last_seen):<22}"
        f"  holding {a.holding}"
        for a in result.agents
    ]
    ctx.emit(result, "\n".join(rows) or "no agents yet")
    return EXIT_OK


def cmd_heartbeat(ctx: Context) -> int:
    with ctx.client() as client:
        result = client.heartbeat(ctx.agent, lease_s=ctx.args.lease)
    ctx.emit(result, f"{ctx.agent}: renewed {result.renewed} lease(s)")
    return EXIT_OK


def cmd_status(ctx: Context) -> int:
    try:
        with Client(ctx.socket, timeout_s=10) as client:
            info = msgspec.json.decode(client.call_raw("server.info").result)
    except DaemonUnavailable:
        ctx.emit(
            {"running": False, "socket": str(ctx.socket)}, f"no daemon answers on {ctx.socket}"
        )
        return EXIT_ERROR
    status = {"running": True, "socket": str(ctx.socket), **info}
    counts = ", ".join(f"{state} {n}" for state, n in info["counts"].items())
    since = render.relative(info["started_at"])
    human = "\n".join(
        [
            f"coordd {info['version']} running (pid {info['pid']}, since {since})",
            f"socket:   {ctx.socket}",
            f"database: {info['db_path']}",
            f"tasks:    {counts}",
            f"last seq: {info['last_seq']}",
        ]
    )
    ctx.emit(status, human)
    return EXIT_OK


COMMANDS: dict[str, Callable[[Context], int]] = {
    "post": cmd_post,
    "ls": cmd_ls,
    "show": cmd_show,
    "claim": cmd_claim,
    "next": cmd_next,
    "renew": cmd_renew,
    "release": cmd_release,
    "done": cmd_done,
    "fail": cmd_fail,
    "cancel": cmd_cancel,
    "reopen": cmd_reopen,
    "wait": cmd_wait,
    "watch": cmd_watch,
    "agents": cmd_agents,
    "heartbeat": cmd_heartbeat,
    "status": cmd_status,
}


def _emit_error(json_mode: bool, code: int, message: str, data: dict[str, Any]) -> None:
    if json_mode:
        document = {"error": {"code": code, "message": message, "data": data}}
        sys.stdout.write(msgspec.json.encode(document).decode() + "\n")
    else:
        sys.stderr.write(f"coord: {render.clean(message)}\n")


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    json_mode = "--json" in arguments
    try:
        args = build_parser().parse_args(arguments)
    except UsageError as exc:
        _emit_error(json_mode, -32602, str(exc), {"kind": "usage"})
        return EXIT_ERROR
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    json_mode = bool(getattr(args, "json", False))
    ctx = Context(
        args=args,
        json=json_mode,
        socket=default_socket_path(getattr(args, "socket", None)),
        autostart=autostart_enabled(bool(getattr(args, "no_start", False))),
    )
    try:
        return COMMANDS[args.command](ctx)
    except CoordError as exc:
        _emit_error(json_mode, exc.code, exc.message, exc.data)
        return EXIT_LOST if isinstance(exc, LeaseLost) else EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())

"""Agents talk (1.2 section 12): `coord msg`, `coord inbox`, `coord request`, `coord answer`.

`coord inbox` acknowledges what it shows (so a tab is not told twice); `--peek`
shows without acknowledging. `coord request --wait` waits for the holder's
answer, woken by it (`message.wait`), never polling.
"""

from __future__ import annotations

import time

import msgspec

from coordd_apps.cli.arguments import positive_float, task_id
from coordd_apps.cli.context import EXIT_EMPTY, EXIT_LOST, EXIT_OK, EXIT_TIMEOUT, Context
from coordd_apps.cli.registry import UsageError, arg, command
from coordd_apps.wording import render_messages
from coordd_client import human
from coordd_client.client import Client
from coordd_client.text import parse_time
from coordd_wire import bounds
from coordd_wire.wire_messages import InboxResult, Message


@command(
    "msg",
    "send a message: to an agent, on a task's thread, as a reply, or to everyone here",
    "coord msg --to codex-3 'I need src/auth/** after #42; ping me when done'",
    arg("body", metavar="TEXT", help=f"1..{bounds.MESSAGE_BODY.max_length} characters"),
    arg(
        "--to",
        metavar="AGENT",
        action="append",
        help="an agent; again for a few (default: everyone live in this project)",
    ),
    arg("--task", type=task_id, help="on this task's thread (its holder, assignee, creator...)"),
    arg("--reply", type=int, metavar="ID", help="a reply to message ID (goes to its sender)"),
    arg("--question", action="store_true", help="a question: shown open until answered"),
    arg("--key", metavar="KEY", help="an idempotency key: a repeat sends nothing more"),
)
def msg(ctx: Context) -> int:
    """One message, or with several `--to` one to each (a chosen few: what mcp_agent_mail's
    overseer composer gives by ticking names; the protocol sends to one agent or all)."""
    args = ctx.args
    with ctx.client() as client:
        for to in args.to or [None]:
            several = args.key is not None and len(args.to or ()) > 1
            result = client.send_message(
                args.body,
                to=to,
                task_id=args.task,
                reply_to=args.reply,
                kind="question" if args.question else None,
                agent=ctx.agent,
                project=ctx.project,
                idempotency_key=f"{args.key}:{to}" if several else args.key,
            )
            whom = ", ".join(result.recipients) or "nobody live yet (kept for whoever reads it)"
            sent = "sent" if result.created else "already sent"
            said = f"{sent} #{result.message.id} to {whom}"
            # Most often a typo (docs/PROTOCOL-1.2.md, "Names never seen"); never for the
            # person, whose inbox `coord top`, `coord web` and `coord inbox` read by name
            # whether or not they have acted as it yet.
            unseen = [name for name in result.never_seen if not human.is_human(name)]
            if unseen:
                names = ", ".join(unseen)
                said += (
                    f"\nnote: {names} {'has' if len(unseen) == 1 else 'have'} never"
                    " been seen here: a typo? `coord agents --all` lists every name (kept a"
                    " week for a tab that starts later)"
                )
            if result.ended:
                names = ", ".join(result.ended)
                said += (
                    f"\nnote: {names} {'has' if len(result.ended) == 1 else 'have'} ended"
                    " (the tab exited): kept for a session that resumes under the name, but"
                    " nothing runs to wake or read it now"
                )
            ctx.emit(result, said)
    return EXIT_OK


@command(
    "inbox",
    "show your unread messages and mark them read (exit 4 if none)",
    "coord inbox --wait 600",
    arg("--wait", type=positive_float, metavar="S", help="wait up to S s for one to arrive"),
    arg("--peek", action="store_true", help="show them without marking them read"),
)
def inbox(ctx: Context) -> int:
    args = ctx.args
    with ctx.client() as client:
        if args.wait:
            found = client.wait_messages(args.wait, agent=ctx.agent)
        else:
            found = client.read_messages(agent=ctx.agent)
        former = _former_inboxes(client, ctx.agent)
        if found.messages and not args.peek:
            client.ack_messages(found.messages[-1].id, agent=ctx.agent)
        for name, theirs in former:  # the human's former terminal names (`human.py`)
            if not args.peek:
                client.ack_messages(theirs.messages[-1].id, agent=name)
        if former:
            every = [found.messages, *(theirs.messages for _, theirs in former)]
            more = found.more or any(theirs.more for _, theirs in former)
            found = msgspec.structs.replace(found, messages=human.merged(every), more=more)
    said = "\n".join(render_messages.message_line(m) for m in found.messages)
    if found.more:
        said += "\n(more unread: run coord inbox again)"
    ctx.emit(found, said or "no unread messages")
    return EXIT_OK if found.messages else EXIT_EMPTY


def _former_inboxes(client: Client, agent: str) -> list[tuple[str, InboxResult]]:
    """The unread messages of the human's former terminal names, each name with any:
    the human's inbox is theirs too (`human.py`); for any other agent, none (and no
    `agent.list` asked)."""
    if agent != human.human_agent():
        return []
    known = [a.agent for a in client.agents().agents]
    found = [(name, client.read_messages(agent=name)) for name in human.inbox_names(agent, known)]
    return [(name, theirs) for name, theirs in found[1:] if theirs.messages]


@command(
    "request",
    "ask whoever holds these paths (or task) to hand them over; --wait for the answer",
    "coord request 'src/auth/**' --why 'needed for #42' --wait 300",
    arg("patterns", nargs="*", metavar="PATTERN", help="reserved paths you need"),
    arg("--task", type=task_id, help="a claimed task you need instead of paths"),
    arg("--to", metavar="AGENT", help="which holder, when several hold them"),
    arg("--why", metavar="TEXT", help="the message the holder reads"),
    arg("--ttl", type=positive_float, metavar="S", help="unanswered, it expires (default 900)"),
    arg("--wait", type=positive_float, metavar="S", help="wait up to S s for the answer"),
)
def request(ctx: Context) -> int:
    args = ctx.args
    if bool(args.patterns) == (args.task is not None):
        raise UsageError("request: name PATTERNs or --task, one of them")
    with ctx.client() as client:
        result = client.request_release(
            patterns=args.patterns or None,
            task_id=args.task,
            to=args.to,
            body=args.why,
            ttl_s=args.ttl,
            agent=ctx.agent,
            project=ctx.project,
        )
        asked = result.request
        if not args.wait:
            ctx.emit(
                result, f"asked {asked.to} (request #{asked.id}); the answer comes to your inbox"
            )
            return EXIT_OK
        answer = _wait_for_answer(client, ctx.agent, asked, args.wait)
        if answer is None:
            state = client.get_message(asked.id).message.request
            if state is not None and state.status == "expired":
                said = f"request #{asked.id} to {asked.to} expired unanswered; ask again or wait"
            else:
                said = f"no answer to request #{asked.id} from {asked.to} yet"
            ctx.emit(result, said)
            return EXIT_TIMEOUT
        if _only_unread(client, ctx.agent, answer):
            client.ack_messages(answer.id, agent=ctx.agent)
        now = client.get_message(asked.id).message
    ctx.emit(now, render_messages.message_line(answer))
    denied = now.request is not None and now.request.status == "denied"
    return EXIT_LOST if denied else EXIT_OK


def _only_unread(client: Client, agent: str, answer: Message) -> bool:
    """Whether the answer is the oldest unread message: then acking it skips nothing."""
    unread = client.read_messages(agent=agent, limit=1).messages
    return bool(unread) and unread[0].id == answer.id


def _wait_for_answer(client: Client, agent: str, asked: Message, wait_s: float) -> Message | None:
    """The answer to `asked`, woken by it; other messages stay unread for `coord inbox`."""
    assert asked.request is not None
    expires = parse_time(asked.request.expires_at).timestamp()
    deadline = min(time.time() + wait_s, expires)
    after = asked.id
    while (left := deadline - time.time()) > 0:
        found: InboxResult = client.wait_messages(
            min(left, bounds.MAX_TIMEOUT_S), agent=agent, after_id=after
        )
        for message in found.messages:
            if message.reply_to == asked.id and message.kind == "answer":
                return message
            after = message.id
    return None


@command(
    "answer",
    "answer a release request: approve (hand it over now), deny, or narrow to PATTERNs",
    "coord answer 13 narrow 'src/auth/tokens.py' --reason 'keeping login.py until #42'",
    arg("id", type=int, metavar="ID", help="the request's id (coord inbox shows it)"),
    arg("decision", choices=["approve", "deny", "narrow"]),
    arg("patterns", nargs="*", metavar="PATTERN", help="with narrow: what you hand over"),
    arg("--reason", metavar="TEXT", help="shown to the requester"),
)
def answer(ctx: Context) -> int:
    args = ctx.args
    if bool(args.patterns) != (args.decision == "narrow"):
        raise UsageError("answer: PATTERNs go with narrow, and only with it")
    with ctx.client() as client:
        agent = ctx.agent
        if agent == human.human_agent():  # a request to a former name is answered as it
            agent = human.answering_as(client.get_message(args.id).message.to, agent)
        result = client.answer_request(
            args.id,
            args.decision,
            patterns=args.patterns or None,
            reason=args.reason,
            agent=agent,
        )
    told = f"answered request #{args.id} ({result.answer.body}); {result.answer.to} is told"
    if result.released:  # a pattern ends whole: say what the holder no longer holds
        gone = ", ".join(result.released)
        told += f"\nyou no longer hold {gone}: re-reserve what you still need (`coord reserve`)"
    ctx.emit(result, render_messages.summary(told))
    return EXIT_OK

"""What an approval approves, said the same way wherever a person signs off (issue 47
item 3): the web's confirm pages, `coord top`'s dialogs, and the words that reach the
asking tab.

Two things are approved. An approval gate is a task assigned to the human: its title
is what is asked, its body the question, its poster the asker. A release request is a
message asking a holder to hand reservations (paths) or a claim (a task) over to the
requester, with the requester's reason in its body. A confirmation that names only
"#6" asks the person to sign something they cannot read; these name what is signed.

Pure functions of wire records: no I/O, no markup (each surface escapes as it shows).
"""

from __future__ import annotations

from collections.abc import Sequence

from coordd_apps.wording.advice import listed, when
from coordd_client.text import clean, clean_block
from coordd_wire import bounds, patterns
from coordd_wire.wire import AgentInfo, Reservation, Task
from coordd_wire.wire_messages import Message

#: A question or reason longer than this is cut in a one-line confirmation (the page
#: shows it whole in its facts).
LINE_CHARS = 200

#: `request.answer`'s `reason` bound (docs/PROTOCOL-1.2.md section 12).
MAX_REASON_CHARS = bounds.REASON.max_length or 1024

Facts = list[tuple[str, str]]


def _line(text: str, limit: int = LINE_CHARS) -> str:
    flat = " ".join(clean(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def asked_for(message: Message) -> str:
    """What a release request asks to be handed over: `src/a.py, src/b/**` or `task #4`."""
    request = message.request
    if request is None:
        return "-"
    if request.task_id is not None:
        return f"task #{request.task_id}"
    return clean(listed(request.patterns or (), shown=10))


def _stay(message: Message) -> str:
    """`stays` for one path or a task, `stay` for several paths."""
    request = message.request
    several = request is not None and len(request.patterns or ()) > 1
    return "stay" if several else "stays"


def gate_facts(task: Task) -> Facts:
    """The gate as a person reads it before deciding: what, the question, who asks."""
    facts = [
        ("gate", f"#{task.id} {clean(task.title)}"),
        ("question", clean_block(task.body) if task.body else "-"),
        ("asked by", clean(task.created_by or "-")),
        ("project", clean(task.project)),
    ]
    if task.tags:
        facts.append(("tags", clean(", ".join(task.tags))))
    return facts


def ends_whole(
    message: Message, held: Sequence[Reservation], handed: Sequence[str] = ()
) -> list[str]:
    """The holder's patterns that approving `message` (or narrowing it to `handed`) ends
    whole although they are not what is handed over: each of the holder's reservations
    in the project that overlaps what is handed over ends, since a pattern cannot be
    cut in two (docs/MESSAGES.md), so approving `src/db/schema.py` out of a
    `src/db/**` gives up all of `src/db/**`. `held` is what the surface knows is
    reserved (any agent's; the holder's are picked out here)."""
    request = message.request
    if request is None or request.task_id is not None:
        return []
    given = list(handed) or list(request.patterns or ())
    try:
        asked = [patterns.parse(g) for g in given]
    except patterns.BadPattern:  # a narrowing the daemon will refuse, saying why
        return []
    ended = {
        r.pattern
        for r in held
        if r.agent == request.holder
        and r.project == message.project
        and r.pattern not in given
        and any(patterns.overlap(patterns.parse(r.pattern), a) for a in asked)
    }
    return sorted(ended)


def ends_fact(message: Message, ended: Sequence[str]) -> Facts:
    """The fact a confirmation adds when approving gives up more than is asked for."""
    if not ended or message.request is None:
        return []
    holder = clean(message.request.holder)
    return [
        (
            "also ends",
            f"{holder}'s {clean(listed(ended, shown=10))} (a reservation ends whole:"
            " re-reserve what is still needed)",
        )
    ]


def request_facts(message: Message, ended: Sequence[str] = ()) -> Facts:
    """The release request as a person reads it before deciding: who asks whom for what,
    for which task, why, until when the request stands, and what else approving it
    ends (`ends_whole`)."""
    request = message.request
    facts = [
        ("request", f"#{message.id}"),
        ("requester", clean(message.sender)),
        ("asks for", asked_for(message)),
    ]
    if request is not None:
        facts.append(("held by", clean(request.holder)))
    if message.task_id is not None and (request is None or request.task_id is None):
        facts.append(("task", f"#{message.task_id}"))
    facts.append(("reason", clean_block(message.body) if message.body else "-"))
    if request is not None:
        facts.append(("open until", when(request.expires_at)))
    return facts + ends_fact(message, ended)


def gate_question(verb: str, task: Task, reason: str = "") -> str:
    """`Approve gate #6 "Ship 1.4?", asked by codex-2?` (reject: with the reason)."""
    why = f" because {_line(reason)}" if reason else ""
    asker = f", asked by {clean(task.created_by)}" if task.created_by else ""
    return f'{verb.capitalize()} gate #{task.id} "{_line(task.title)}"{asker}{why}?'


def request_question(
    decision: str, message: Message, patterns: Sequence[str] = (), reason: str = ""
) -> str:
    """`Approve release request #6: hand src/parser.py over to codex-2 (for task #4)?`"""
    request = message.request
    holder = f" from {clean(request.holder)}" if request is not None else ""
    to = clean(message.sender)
    task = (
        f" (for task #{message.task_id})"
        if message.task_id is not None and (request is None or request.task_id is None)
        else ""
    )
    why = f" ({_line(reason)})" if reason else ""
    if decision == "narrow":
        what = clean(listed(patterns, shown=10))
        return (
            f"Narrow release request #{message.id}: hand only {what} of {asked_for(message)}"
            f"{holder} over to {to}{task}{why}?"
        )
    if decision == "deny":
        held = clean(request.holder) if request is not None else "its holder"
        return (
            f"Deny release request #{message.id}: {asked_for(message)} {_stay(message)} with"
            f" {held},"
            f" not handed over to {to}{task}{why}?"
        )
    return (
        f"Approve release request #{message.id}: hand {asked_for(message)}{holder} over"
        f" to {to}{task}{why}?"
    )


def gate_result(human: str, task: Task) -> str:
    """The result an approved gate records, which the asker's tab reads: who approved
    what (`approved by human-ada: "Ship 1.4?"`)."""
    return f'approved by {human}: "{_line(task.title, 120)}"'


def gate_answer(decision: str, task: Task, reason: str = "") -> str:
    """The message the asker of a gate is sent when a person decides it, so its tab
    is told (and an idle one woken) with the decision and the person's reason, not
    only a task state it would have to wait on: `rejected gate #6 "Ship 1.4?":
    not on a Friday`."""
    said = f'{decision} gate #{task.id} "{_line(task.title, 120)}"'
    if reason:
        return f"{said}: {_line(reason, MAX_REASON_CHARS)}"
    return said + (": its dependents may go" if decision == "approved" else "")


def answer_reason(decision: str, message: Message, said: str = "") -> str | None:
    """The reason sent with an answer: the person's own words, or None. The daemon's
    answer says what was decided (approve and narrow: what was handed over, "approved:
    src/x.py is yours now"; deny: what stays where, "denied: src/x.py stays with
    human-ada"), the same for every surface that answers (CLI, MCP, top, web, the TS
    client), and the reason follows it in brackets."""
    del decision, message  # the daemon words the decision; kept for the callers' shape
    return said[:MAX_REASON_CHARS] or None


def facts_text(facts: Facts) -> str:
    """`gate: #6 Ship 1.4?` one fact a line, for a terminal dialog."""
    width = max((len(name) for name, _ in facts), default=0) + 1
    return "\n".join(f"{name + ':':<{width}} {value}" for name, value in facts)


def gone_refusal(message: Message, agents: Sequence[AgentInfo]) -> str | None:
    """Why approving `message` is refused before the person confirms: its requester's tab
    has ended (docs/PROTOCOL-1.2.md section 2a), so what it asked for would go to nobody
    and stay held; None when it may still run (the daemon refuses it too)."""
    requester = next((a for a in agents if a.agent == message.sender), None)
    if requester is None or requester.ended_at is None:
        return None
    return (
        f"{clean(message.sender)} is gone (its tab ended {when(requester.ended_at)}):"
        f" approving #{message.id} would hand it to nobody; deny it instead"
    )

"""Messages in words (1.2 section 12), one rule for every surface: `coord inbox`, the
hooks' context lines, the session-start context, the MCP `board` and tools.

Another agent's text lands in a model's context and a terminal: each body is shown
on one line, controls escaped (`clean`), and cut at `LINE_CHARS`, saying how
to read the rest; a release request says how to answer it.
"""

from __future__ import annotations

from collections.abc import Sequence

from coordd_client.human import is_person
from coordd_client.text import clean
from coordd_wire.wire_messages import Message

#: A message's body in a context line: enough for a question, not a page of someone's diff.
LINE_CHARS = 300

#: Said under a tab's new messages when one is the person's (issue 47: what mcp_agent_mail's
#: Human Overseer preamble and high importance give, docs/WATCHING.md). A person's word
#: outranks another agent's: the model is told so, and their messages come first.
HUMAN_FIRST = (
    "The human's message comes first: do what they ask before going on with your task,"
    " then go back to it unless they said otherwise."
)


def summary(body: str, limit: int = LINE_CHARS) -> str:
    text = " ".join(clean(body).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def message_line(message: Message) -> str:
    """`#12 from codex-3 (question, task #42): is the lexer in scope?`; a person's
    `#13 from human-ada (the human): leave the parser to codex`."""
    notes = ["the human"] if is_person(message.sender) else []
    request = message.request
    if request is not None:
        asked = (
            f"task #{request.task_id}"
            if request.task_id is not None
            else ", ".join(request.patterns or ())
        )
        notes.append(f"release request for {clean(asked)}, {request.status}")
    elif message.kind in ("question", "answer"):
        notes.append(message.kind + (", open" if message.open else ""))
    if message.reply_to is not None:
        notes.append(f"re #{message.reply_to}")
    if message.task_id is not None and (request is None or request.task_id is None):
        notes.append(f"task #{message.task_id}")
    if message.audience == "project":
        notes.append("to everyone")
    note = f" ({'; '.join(notes)})" if notes else ""
    line = f"#{message.id} from {clean(message.sender)}{note}: {summary(message.body)}"
    if request is not None and request.status == "open":
        narrow = " | narrow PATTERN..." if request.task_id is None else ""
        line += f" -> answer: coord answer {message.id} approve|deny{narrow}"
    elif message.kind == "question" and message.open:
        line += f" -> reply: coord msg --reply {message.id} '...'"
    return line


def new_messages(messages: Sequence[Message]) -> str:
    """`1 new message from codex-3: ...`, or a count and one line each; the human's
    first, with `HUMAN_FIRST` under them."""
    if not messages:
        return ""
    ordered = sorted(messages, key=lambda m: not is_person(m.sender))  # stable: by id after
    after = f"\n{HUMAN_FIRST}" if is_person(ordered[0].sender) else ""
    if len(ordered) == 1:
        return f"coord: 1 new message {message_line(ordered[0])}{after}"
    # Shown here, they are read: the next hook and `coord inbox` do not repeat them.
    lines = [f"coord: {len(ordered)} new messages (reply: coord msg --reply ID):"]
    lines += [f"  {message_line(m)}" for m in ordered]
    return "\n".join(lines) + after

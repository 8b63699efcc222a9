"""A tool's answer: the protocol's result object as structured content and the same JSON
as text, or a tool error (`isError`) that says what happened and what to do next.

An error carries text only, no structured content: the MCP specification
requires structured results to conform to the tool's `outputSchema`, and
clients that validate (the official Inspector) would otherwise hide coord's
message behind a schema failure. The error's kind leads the text
(`lease_lost: ...`), so a model and a script can both branch on it; a second
text block carries the protocol's error object as JSON (`{"error": {kind,
code, message, data}}`), conflicts and all, for a client that wants them; where
`advice` words the refusal, its `message` is that advice too, since the model reads
this block as well.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
from mcp.types import CallToolResult, TextContent

from coordd_apps.wording import advice
from coordd_client import acks
from coordd_wire.errors import CoordError
from coordd_wire.method_table import Call

#: The next step to suggest for each error kind, in this server's own tool names.
NEXT_STEP = {
    "lease_lost": "call claim_next for other work",
    "conflict": "call get_task to see where it stands, or claim_next for other work",
    "blocked": "finish its dependencies first, or call claim_next for ready work",
    "reserved": "work on other files, or call reserve_paths again with wait_s to wait for it",
    "not_found": "call list_tasks or board to see what exists",
    "invalid_params": "fix the argument named and call again",
    "overloaded": "retry in a moment",
    "shutting_down": "coordd is restarting; retry in a moment",
    "daemon_unavailable": (
        "start it with `coordd serve` (or `make run` in a coordd checkout), or point"
        " $COORDD_SOCKET at the socket it serves"
    ),
    "untrusted_socket": "the socket belongs to another user: set $COORDD_SOCKET to your own",
    "several_boards": (
        "do not retry: nothing was done on any board; tell the user, who stops the board"
        " nobody should use or gives this server the socket of the one meant ($COORDD_SOCKET)"
    ),
    "wrong_board": (
        "do not retry: nothing was done; tell the user this tab's surfaces reach two"
        " boards (`coord doctor` in a terminal names them and the fix)"
    ),
}
#: A `data.reason` whose next step differs from its kind's.
NEXT_STEP_BY_REASON = {
    "database_held": (
        "another coordd holds the board (its pid and socket are in the message): point"
        " $COORDD_SOCKET at its socket in this server's configuration, or stop it"
    ),
}

#: A slot refused for another reason than being full (a port lease's name, another
#: capacity): not a task conflict, so not get_task's step.
NEXT_STEP_OF_SLOT = "call acquire_slot with another name, or with the capacity its holders name"

_encoder = msgspec.json.Encoder()


def answer(result: dict[str, Any]) -> CallToolResult:
    text = _encoder.encode(result).decode()
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=result)


def refusal(exc: CoordError) -> CallToolResult:
    """The error result for `exc`: said in this server's tool and argument names by
    `advice` (a full slot, reserved paths, a landing's turn), else the daemon's message
    and the kind's next step."""
    kind = str(exc.data.get("kind", exc.kind))
    error = {"kind": kind, "code": exc.code, "message": exc.message, "data": exc.data}
    said = advice.explain(advice.Surface.MCP, kind, exc.data)
    if said is not None:
        # The model reads the error object too: its message says the same as the advice,
        # not the daemon's words for no surface (quoted names, a raw instant, `wait_s`
        # in backticks). Scripts branch on kind, code and data, which are the daemon's.
        return _error(f"{kind}: {said}", {**error, "message": said})
    step = (
        NEXT_STEP_BY_REASON.get(str(exc.data.get("reason")))
        or (NEXT_STEP_OF_SLOT if kind == "conflict" and exc.data.get("slot") else None)
        or NEXT_STEP.get(kind, "see the message")
    )
    return _error(f"{kind}: {exc.message}; {step}", error)


def invalid_params(problem: str, field: str) -> CallToolResult:
    """Arguments refused before the tool ran, worded like the daemon's own -32602."""
    text = f"invalid_params: {problem}; {NEXT_STEP['invalid_params']}"
    data = {"kind": "invalid_params", "field": field}
    return _error(text, {"kind": "invalid_params", "code": -32602, "message": text, "data": data})


def _error(text: str, error: dict[str, Any]) -> CallToolResult:
    detail = _encoder.encode({"error": error}).decode()
    return CallToolResult(
        content=[TextContent(type="text", text=text), TextContent(type="text", text=detail)],
        is_error=True,
    )


def error_of(result: CallToolResult) -> dict[str, Any] | None:
    """The protocol error object an error result carries (its second text block)."""
    if not result.is_error or len(result.content) < 2:
        return None
    block = result.content[1]
    if not isinstance(block, TextContent):
        return None
    decoded: dict[str, Any] = msgspec.json.decode(block.text)
    return decoded.get("error")


def lost_claim_text(result: dict[str, Any]) -> str | None:
    """For a lost claim (a normal result): who holds it, until when, and what to do."""
    if result.get("won", True):
        return None
    task = result.get("task") or {}
    holder = task.get("claimed_by")
    until = task.get("lease_expires_at")
    if task.get("state") == "claimed" and holder and until:
        return (
            f"lost: #{task.get('id')} is {advice.holder(holder, until)};"
            " call claim_next for other work"
        )
    if task.get("assignee"):
        return (
            f"lost: #{task.get('id')} is assigned to {task['assignee']};"
            " call claim_next for other work"
        )
    return f"lost: #{task.get('id')} is {task.get('state')}; call claim_next for other work"


def repeated_completion_text(result: dict[str, Any], params: Mapping[str, Any]) -> str | None:
    """For a completion that returned an earlier one's result or ack, not what this call
    asked (`acks.completion_repeated`, `acks.asked_ack_title`): nothing of
    this call was recorded, which the result alone would not tell a model reading the
    first call's ack as its own."""
    task, posted = result.get("task") or {}, result.get("posted")
    if not acks.completion_repeated(
        task.get("result"),
        None if posted is None else posted.get("title"),
        asked_result=params.get("result"),
        asked_ack=acks.asked_ack_title(params.get("then_post")),
    ):
        return None
    kept = (
        f"its result and its ack #{posted.get('id')} stay as shown"
        if posted is not None
        else "its result stays as shown, and the first completion posted no ack"
    )
    return (
        f"#{task.get('id')} was done already: {kept}; nothing of this call was recorded"
        " (reopen_task to redo it)"
    )


def note(call: Call[Any], result: dict[str, Any]) -> str | None:
    """What the model must not miss beside a normal result: a lost claim, a completion
    that recorded nothing."""
    if call.method == "task.claim":
        return lost_claim_text(result)
    if call.method == "task.complete":
        return repeated_completion_text(result, call.params or {})
    return None

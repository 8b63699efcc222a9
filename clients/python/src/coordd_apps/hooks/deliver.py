"""Messages delivered into a tab's context (1.2 section 12), at most once each.

The hooks that run anyway carry them: the session-start context, and during a
turn `coord hook deliver` on Claude Code's and Codex's `PostToolUse` and
`UserPromptSubmit` (their `additionalContext`), and Cursor's `stop` (its
`followup_message`, which starts the next turn). What is shown is acknowledged
(`message.ack`) before the hook answers, so the next hook does not repeat it;
a hook that fails before the ack shows nothing, and the next one shows it.
The text is bounded (`reported.DELIVERY_CHARS`): a long inbox is summarised
with a count and `coord inbox` / `read_messages` to read the rest. Reading and
acknowledging is `reported.take_unread`, which the wake waiter and the session
start share (they load it anyway: what a tab was told lives there).
"""

from __future__ import annotations

import json
import os
import sys

from coordd_apps.hooks.payload import HookInput
from coordd_apps.hooks.reported import take_unread
from coordd_client.client import Client


def deliver(socket: os.PathLike[str] | str, agent: str) -> str:
    """`take_unread` on a connection of its own (a hook's one round trip, or two).

    Raises `CoordError` when the daemon cannot be reached (the runner says so once per
    outage); a failure after connecting is taken as nothing to deliver.
    """
    with Client(socket, timeout_s=2.0) as client:
        return take_unread(client, agent)


#: The turn events whose `additionalContext` reaches the model (Claude Code, and Codex
#: on the same shape); any other event gets the PostToolUse shape.
CONTEXT_EVENTS = ("PostToolUse", "UserPromptSubmit")


def respond(given: HookInput, text: str) -> int:
    """Answer the host with `text` in the shape its event takes; nothing when it is ""."""
    if not text:
        if given.host == "cursor":
            sys.stdout.write("{}\n")
        return 0
    if given.host == "cursor":
        # Cursor's `stop` hook: the follow-up is sent as the user's next message, so
        # the chat goes on with the messages (at most 5 times in a row, per Cursor).
        document: dict[str, object] = {"followup_message": text}
    else:
        event = given.raw.get("hook_event_name")
        name = event if event in CONTEXT_EVENTS else "PostToolUse"
        document = {"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}}
    sys.stdout.write(json.dumps(document) + "\n")
    return 0

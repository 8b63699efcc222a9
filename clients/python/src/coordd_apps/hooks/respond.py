"""Each host's answer shapes (HOSTS.md section 3): context at session start, and a
guard's deny or allow."""

from __future__ import annotations

import json
import sys

from coordd_apps.hooks.payload import Host

#: Exit codes a hook returns to its host.
PROCEED, BLOCK = 0, 2


def context(host: Host, text: str) -> int:
    if host == "cursor":
        document: dict[str, object] = {"additional_context": text}
    else:  # Claude Code and Codex share this shape
        document = {
            "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}
        }
    sys.stdout.write(json.dumps(document) + "\n")
    return PROCEED


#: Claude Code 2.1.332 shows the model (and its user) every PreToolUse refusal as
#: "PreToolUse:Edit hook error: <reason>", whatever the shape (a JSON deny, with or
#: without a reason; `decision: block`; exit 2, which also puts the command in
#: brackets): no shape reads as a plain refusal (tests/hosts/test_claude_shapes.py).
#: So a deny also carries this context, which it shows the model after the result as
#: "PreToolUse:Edit hook additional context: ...", saying the refusal is meant, and
#: a `systemMessage` that its user sees (the model does not) as "PreToolUse:Edit says:
#: ..." just above the tool's "Error: PreToolUse:Edit hook error: ..." line.
CLAUDE_DENY_CONTEXT = (
    "coord: the edit was refused on purpose by coordd's edit guard (Claude Code labels"
    ' every hook refusal "hook error"); the hook works: do what its reason says'
)
CLAUDE_DENY_NOTE = (
    'coord refused this edit on purpose: the "hook error" below is its reason, not a broken hook'
)


def deny(host: Host, reason: str) -> int:
    if host == "claude":
        output = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
                "additionalContext": CLAUDE_DENY_CONTEXT,
            },
            "systemMessage": CLAUDE_DENY_NOTE,
        }
        sys.stdout.write(json.dumps(output) + "\n")
        return PROCEED  # the JSON decides; exit 0 so the host reads it
    if host == "cursor":
        answer = {"permission": "deny", "user_message": reason, "agent_message": reason}
        sys.stdout.write(json.dumps(answer) + "\n")
        return PROCEED
    # Codex: exit 2 with the reason on stderr blocks the tool call (never "ask": Codex
    # rejects it and then runs the call).
    sys.stderr.write(reason + "\n")
    return BLOCK


def allow(host: Host, note: str = "", context: str = "") -> int:
    """Let the edit go on; `context` is said to the model (warnings, others' edits, an
    unchecked edit), `note` to the person (and on stderr, for logs).

    Checked with the real hosts (tests/hosts): an allowed PreToolUse's
    `hookSpecificOutput.additionalContext` reaches the model on Claude Code 2.1.332
    (a system message after the tool's result) and on Codex 0.171.0 (a developer
    message); neither shows the model `systemMessage`, stderr or a
    `permissionDecisionReason`, and Codex fails the hook on `"permissionDecision":
    "allow"` (its context is then lost), so no decision is sent: the host's own
    permission rules stay in force. Claude Code shows `systemMessage` to its user.
    Cursor (documented only): `agent_message` and `user_message`.
    """
    if note:
        sys.stderr.write(f"coord: {note}\n")
    if host == "cursor":
        answer: dict[str, object] = {"permission": "allow"}
        if context:
            answer["agent_message"] = context
        if note:
            answer["user_message"] = note
        sys.stdout.write(json.dumps(answer) + "\n")
        return PROCEED
    output: dict[str, object] = {}
    if context:
        output["hookSpecificOutput"] = {"hookEventName": "PreToolUse", "additionalContext": context}
    if note:
        output["systemMessage"] = f"coord: {note}"
    if output:
        sys.stdout.write(json.dumps(output) + "\n")
    return PROCEED

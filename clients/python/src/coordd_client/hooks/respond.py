"""Each host's answer shapes (HOSTS.md section 3): context at session start, and a
guard's deny or allow."""

from __future__ import annotations

import json
import sys

from coordd_client.hooks.payload import Host

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


def deny(host: Host, reason: str) -> int:
    if host == "claude":
        output = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
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
    """Let the edit go on; `context` is said to the model (warnings, others' edits)."""
    if note:
        sys.stderr.write(f"coord: {note}\n")
    if host == "cursor":
        answer = {"permission": "allow", **({"agent_message": context} if context else {})}
        sys.stdout.write(json.dumps(answer) + "\n")
    elif context and host == "claude":
        output = {"hookEventName": "PreToolUse", "additionalContext": context}
        sys.stdout.write(json.dumps({"hookSpecificOutput": output}) + "\n")
    elif context:  # Codex: no documented context for a tool call; its log shows stderr
        sys.stderr.write(context + "\n")
    return PROCEED

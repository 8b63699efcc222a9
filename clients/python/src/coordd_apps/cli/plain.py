"""The daemon's -32602 refusals in plain words, naming the option the user typed.

The daemon names the offending field (`data.field`) and quotes msgspec's
constraint text ("Expected `int` <= 1000 - at `$.priority`"); an agent
reading that has to translate twice. This says "--priority must be at most
1000" instead.
"""

from __future__ import annotations

import re

from coordd_apps.wording import advice
from coordd_wire.errors import CoordError, InvalidParams

#: Wire field -> what the user typed to set it.
OPTION_OF = {
    "id": "the task id",
    "agent": "--agent",
    "project": "--project",
    "title": "the title",
    "body": "the body text",
    "kind": "--kind",
    "priority": "--priority",
    "tags": "--tag",
    "tag": "--tag",
    "lease_s": "--lease",
    "fence": "--fence",
    "result": "--result",
    "reason": "--reason",
    "timeout_s": "--timeout",
    "title_contains": "--title-contains",
    "after_seq": "--after-seq",
    "idempotency_key": "--key",
    "limit": "--limit",
    "after_id": "--after",
    "then_post.title": "--ack",
    # 1.2 (sections 12 to 14): coord msg / request / slot / port / land.
    "to": "--to",
    "reply_to": "--reply",
    "wait_s": "--wait",
    "ttl_s": "--ttl",
    "capacity": "--capacity",
    "low": "--range's low end",
    "high": "--range's high end",
    "onto": "--onto",
    "branch": "the branch",
    "patterns": "the PATTERNs",
}

#: What a field's pattern allows, said once per field.
PATTERN_MEANS = {
    "kind": "lowercase letters, digits, '_' and '-', starting with a letter, at most 32",
    "agent": "printable characters, no spaces at either end",
}

_RULES = [
    (re.compile(r"Expected `(?:int|float)` >= (\S+)"), "must be at least {0}"),
    (re.compile(r"Expected `(?:int|float)` <= (\S+)"), "must be at most {0}"),
    (re.compile(r"Expected `(?:str|array)` of length >= (\d+)"), "must not be empty"),
    (re.compile(r"Expected `str` of length <= (\d+)"), "must be at most {0} characters"),
    (re.compile(r"Expected `array` of length <= (\d+)"), "takes at most {0} values"),
    (re.compile(r"Object missing required field `([^`]+)`"), "is required"),
    (re.compile(r"must be printable: (U\+[0-9A-F]+) is not"), "must be printable ({0} is not)"),
]


def plain_message(exc: CoordError) -> str:
    """`exc.message`, rewritten in plain words when it is a params refusal we can read;
    any other refusal as `advice` says it to a `coord` user (its flags and commands)."""
    if not isinstance(exc, InvalidParams):
        kind = str(exc.data.get("kind", exc.kind))
        return advice.refusal(advice.Surface.CLI, kind, exc.message, exc.data)
    field = str(exc.data.get("field") or "")
    option = OPTION_OF.get(field, f"`{field}`" if field else "a value")
    text = exc.message
    if "matching regex" in text:
        allowed = PATTERN_MEANS.get(field.rsplit(".", 1)[-1])
        return f"{option} has characters that are not allowed" + (
            f": use {allowed}" if allowed else ""
        )
    for pattern, template in _RULES:
        match = pattern.search(text)
        if match:
            return f"{option} {template.format(*match.groups())}"
    if "after_seq" in text and "beyond the newest" in text:
        return text
    return f"{option} is not valid: {text.removeprefix('invalid params: ')}"

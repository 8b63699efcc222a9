"""Model calls read from a host's own record of a session (issue 48): pure parsing, no I/O.

- **Claude Code** (`transcript_path`, JSONL): an assistant line carries
  `message.usage` (`input_tokens`, `output_tokens`, `cache_creation_input_tokens`,
  `cache_read_input_tokens`), `message.model`, `message.id`, `requestId` and
  `timestamp`. One response is written as several lines, one per content block,
  each repeating the response's usage, so the entry id is `message.id:requestId`
  (the line's own `uuid` would count a response once per block); within one read
  the line with the most output wins.
- **Codex** (`transcript_path` is the rollout, `~/.codex/sessions/.../rollout-*.jsonl`):
  an `event_msg` whose payload is a `token_count` carries `info.last_token_usage`
  (`input_tokens`, of which `cached_input_tokens` were read from cache, and
  `output_tokens`, reasoning included) and `info.total_token_usage`, the session's
  running total, whose `total_tokens` names the call: a `token_count` repeated
  with the same total (Codex sends one again on a rate-limit update) is the same
  call. The model is the newest `turn_context` line's, else the hook's `model`.

Only lines that can carry usage are parsed at all (a cheap byte test first: a
tool result line may be megabytes). Entries that would not fit the wire's bounds
are dropped here rather than refused there, so one odd line cannot stop a
transcript's reports for good.
"""

from __future__ import annotations

import json
import re
from typing import Any

from coordd_client.protocol import bounds

Entry = dict[str, Any]

_ID = re.compile(bounds.USAGE_ID.python_pattern() or "")
_MODEL = re.compile(bounds.USAGE_MODEL.python_pattern() or "")
_AT = re.compile(bounds.USAGE_AT.python_pattern() or "")
_MAX_TOKENS = int(bounds.USAGE_TOKENS.le or 0)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and 0 <= value <= _MAX_TOKENS else None


def _entry(key: Any, at: Any, model: Any, counts: dict[str, Any]) -> Entry | None:
    """A wire entry, or None if anything in it is out of the wire's bounds or all zero."""
    if not (isinstance(key, str) and len(key) <= 256 and _ID.search(key)):
        return None
    if not (isinstance(at, str) and _AT.search(at)):
        return None
    if not (isinstance(model, str) and len(model) <= 128 and _MODEL.search(model)):
        return None
    checked = {name: _count(value) for name, value in counts.items()}
    if any(value is None for value in checked.values()) or not any(checked.values()):
        return None
    return {"id": key, "at": at, "model": model, **checked}


def _json(line: bytes) -> dict[str, Any] | None:
    try:
        found = json.loads(line)
    except ValueError:
        return None  # a line cut short, or not JSON: skipped
    return found if isinstance(found, dict) else None


def claude_entries(lines: list[bytes]) -> list[Entry]:
    """Claude Code's assistant lines with usage, one entry per response."""
    found: dict[str, Entry] = {}
    for line in lines:
        if b'"usage"' not in line:
            continue
        obj = _json(line)
        message = obj.get("message") if obj and obj.get("type") == "assistant" else None
        usage = message.get("usage") if isinstance(message, dict) else None
        if not isinstance(message, dict) or not isinstance(usage, dict):
            continue
        assert obj is not None
        response, request = message.get("id"), obj.get("requestId")
        key = f"{response}:{request}" if isinstance(response, str) else obj.get("uuid")
        entry = _entry(
            key,
            obj.get("timestamp"),
            message.get("model"),
            {
                "input": usage.get("input_tokens", 0),
                "output": usage.get("output_tokens", 0),
                "cache_creation": usage.get("cache_creation_input_tokens", 0) or 0,
                "cache_read": usage.get("cache_read_input_tokens", 0) or 0,
            },
        )
        if entry is None:
            continue
        kept = found.get(entry["id"])
        if kept is None or entry["output"] > kept["output"]:
            found[entry["id"]] = entry
    return list(found.values())


def codex_entries(
    lines: list[bytes], session: str, model: str | None
) -> tuple[list[Entry], str | None]:
    """Codex's `token_count` events, one entry per model call; and the model in force
    at the end of these lines (for the next read, which starts after them)."""
    found: dict[str, Entry] = {}
    for line in lines:
        if b"turn_context" in line:
            obj = _json(line)
            payload = obj.get("payload") if obj and obj.get("type") == "turn_context" else None
            if isinstance(payload, dict) and isinstance(payload.get("model"), str):
                model = payload["model"]
            continue
        if b"token_count" not in line:
            continue
        obj = _json(line)
        payload = obj.get("payload") if obj else None
        if not isinstance(payload, dict) or payload.get("type") != "token_count":
            continue
        info = payload.get("info")
        last = info.get("last_token_usage") if isinstance(info, dict) else None
        total = info.get("total_token_usage") if isinstance(info, dict) else None
        if not isinstance(last, dict) or not isinstance(total, dict):
            continue  # a rate-limit update: no call
        assert obj is not None
        inputs, cached = last.get("input_tokens", 0), last.get("cached_input_tokens", 0) or 0
        if not isinstance(inputs, int) or not isinstance(cached, int):
            continue
        entry = _entry(
            f"{session}:{total.get('total_tokens')}",
            obj.get("timestamp"),
            model,
            {
                "input": inputs - cached,
                "output": last.get("output_tokens", 0),
                "cache_creation": 0,
                "cache_read": cached,
            },
        )
        if entry is not None:
            found.setdefault(entry["id"], entry)
    return list(found.values()), model

"""Model calls read from a host's own record of a session (issue 48): pure parsing, no I/O.

- **Claude Code** (`transcript_path`, JSONL): an assistant line carries
  `message.usage` (`input_tokens`, `output_tokens`, `cache_creation_input_tokens`,
  `cache_read_input_tokens`), `message.model`, `message.id`, `requestId` and
  `timestamp`. One response is written as several lines, one per content block,
  each repeating the response's usage, so the entry id is `message.id:requestId`
  (the line's own `uuid` would count a response once per block), or `message.id`
  alone where the line has no `requestId` (2.1.332 writes none, and writes the
  line once the response is whole: its `output_tokens` are the final count);
  within one read the line with the most output wins.
- **Codex** (`transcript_path` is the rollout, `~/.codex/sessions/.../rollout-*.jsonl`):
  Codex 0.171.0 writes a `token_usage_record` line for each model response as
  it arrives (`payload.response_id`, `payload.usage`: `input_tokens`, of which
  `cached_input_tokens` were read from cache, `output_tokens`, reasoning
  included), keyed `session:response_id`; its `timestamp` is when the response
  came, before the tools it asked for ran. Its `token_count` event
  (`event_msg`, `info.last_token_usage` and the running `info.total_token_usage`)
  comes only after those tools ran, so its time would charge a response that
  claims (or completes) a task to the state after the claim: once a rollout has
  shown a `token_usage_record`, its `token_count`s are ignored (the caller keeps
  that flag with the offset). Older rollouts have `token_count`s only; there the
  running total's `total_tokens` names the call (a `token_count` repeated with
  the same total on a rate-limit update is the same call). The model is the
  newest `turn_context` line's, else the hook's `model`.

Only lines that can carry usage are parsed at all (a cheap byte test first: a
tool result line may be megabytes). Entries that would not fit the wire's bounds
are dropped here rather than refused there, so one odd line cannot stop a
transcript's reports for good.
"""

from __future__ import annotations

import json
import re
from typing import Any

from coordd_wire import bounds

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
        key: Any = obj.get("uuid")
        if isinstance(response, str):  # 2.1.332 writes no requestId: the response's id alone
            key = f"{response}:{request}" if isinstance(request, str) else response
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
    lines: list[bytes], session: str, model: str | None, records: bool = False
) -> tuple[list[Entry], str | None, bool]:
    """Codex's model calls, one entry per response; the model in force at the end of
    these lines (for the next read, which starts after them); and whether the rollout
    has shown a `token_usage_record` (then its `token_count`s are not read)."""
    found: dict[str, Entry] = {}
    for line in lines:
        if b"turn_context" in line:
            obj = _json(line)
            payload = obj.get("payload") if obj and obj.get("type") == "turn_context" else None
            if isinstance(payload, dict) and isinstance(payload.get("model"), str):
                model = payload["model"]
            continue
        if b"token_usage_record" in line:
            obj = _json(line)
            payload = (
                obj.get("payload") if obj and obj.get("type") == "token_usage_record" else None
            )
            if not isinstance(payload, dict):
                continue
            assert obj is not None
            records = True
            response, usage = payload.get("response_id"), payload.get("usage")
            if isinstance(response, str) and isinstance(usage, dict):
                entry = _codex_entry(f"{session}:{response}", obj.get("timestamp"), model, usage)
                if entry is not None:
                    found.setdefault(entry["id"], entry)
            continue
        if records or b"token_count" not in line:
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
        key = f"{session}:{total.get('total_tokens')}"
        entry = _codex_entry(key, obj.get("timestamp"), model, last)
        if entry is not None:
            found.setdefault(entry["id"], entry)
    return list(found.values()), model, records


def _codex_entry(key: str, at: Any, model: str | None, usage: dict[str, Any]) -> Entry | None:
    """One Codex usage (`input_tokens` include `cached_input_tokens`) as a wire entry."""
    inputs, cached = usage.get("input_tokens", 0), usage.get("cached_input_tokens", 0) or 0
    if not isinstance(inputs, int) or not isinstance(cached, int):
        return None
    counts = {
        "input": inputs - cached,
        "output": usage.get("output_tokens", 0),
        "cache_creation": 0,
        "cache_read": cached,
    }
    return _entry(key, at, model, counts)

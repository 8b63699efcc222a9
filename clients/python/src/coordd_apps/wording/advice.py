"""Advice in the reader's own terms (issue 47 item 4): the one place a refusal becomes
words for the surface that will read it, and where times, counts and lists are said.

The daemon's refusals are written for no one surface: "wait for it (`wait_s`)" names a
wire field that a `coord` user types as `--wait` and an MCP model passes as the
argument `wait_s` of a tool it must also be told the name of. Each surface says what
its reader can do next:

- `Surface.CLI`: a person or a model at a shell: `coord` commands and their flags;
- `Surface.MCP`: a model calling this server's tools: tool and argument names,
  values as JSON;
- `Surface.HOOK`: a host's model reading a hook's verdict: it has the MCP tools
  and a shell, so both are named.

The refusals with structure (`data`) are said anew from it (a full slot, paths
reserved, a landing's turn); any other message keeps its words, with the wire field
it names translated (`wire_words`). Times are always "in 9 min (13:42Z)" (`when`),
counts agree with their noun (`plural`), and lists never show a Python repr
(`listed`, `json_list`).

The standard library only, and nothing heavy at import: the pre-edit hook imports it.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any


class Surface(enum.Enum):
    """Who reads the advice, and so which names it uses."""

    CLI = "cli"
    MCP = "mcp"
    HOOK = "hook"


#: Seconds an MCP tool may wait (`mcp_bridge.traits.MAX_WAIT_S`: hosts time a tool call
#: out after a minute or so); a shell command may wait the protocol's 600.
MCP_WAIT_S = 50
#: The `--wait` a suggested shell command carries.
SHELL_WAIT_S = 300
#: The daemon's `reason` for a reservation taken on a first edit (docs/PROTOCOL-1.2.md
#: section 11), said as `reserved on first edit`.
AUTO_REASON = "auto: reserved on first edit (coordd)"
#: The clock read when no `now` is given: this machine's wall clock (a test sets it).
wall_clock: Callable[[], float] = time.time


# --- times, counts, lists ------------------------------------------------------------


def _epoch(at: str) -> int:
    import calendar  # small; imported here like the rest of a hook's late imports

    return calendar.timegm(time.strptime(at[:19], "%Y-%m-%dT%H:%M:%S"))


def left(at: str, now: float | None = None) -> str:
    """How far an RFC 3339 UTC instant is from now, in the unit a reader wants:
    "in under a minute", "in 9 min", "in 3 h", "in 2 d"; "just now", "9 min ago",
    "3 h ago", "2 d ago" once past. Whole minutes: a model reading a deny seldom knows
    what time it is, and a local daemon shares this machine's clock (a team node's
    skew is seconds, below what whole minutes show)."""
    seconds = _epoch(at) - (wall_clock() if now is None else now)
    minutes = round(abs(seconds) / 60)
    if minutes < 1:
        return "in under a minute" if seconds >= 0 else "just now"
    if minutes < 120:
        span = f"{minutes} min"
    elif minutes < 48 * 60:
        span = f"{round(minutes / 60)} h"
    else:
        span = f"{round(minutes / 1440)} d"
    return f"in {span}" if seconds >= 0 else f"{span} ago"


def clock(at: str, now: float | None = None) -> str:
    """`13:42Z`; with the date when it is not within a day of now: `2026-12-03 13:42Z`."""
    far = abs(_epoch(at) - (wall_clock() if now is None else now)) >= 86400
    return f"{at[:10]} {at[11:16]}Z" if far else f"{at[11:16]}Z"


def when(at: str, now: float | None = None) -> str:
    """`in 9 min (13:42Z)`, `3 min ago (13:30Z)`: how far, then the clock time."""
    return f"{left(at, now)} ({clock(at, now)})"


def plural(n: int, word: str, words: str | None = None) -> str:
    """`1 path`, `2 paths`, `0 paths`; `words` for a plural that is not `word + s`."""
    return f"{n} {word if n == 1 else words or word + 's'}"


def listed(items: Iterable[str], shown: int = 5) -> str:
    """`src/a.py, src/b.py and 3 more`: names as they are, never a repr."""
    names = list(items)
    head = ", ".join(names[:shown])
    return head + (f" and {len(names) - shown} more" if len(names) > shown else "")


def json_list(items: Iterable[str]) -> str:
    """`["src/parser.py"]`: a list as a model passes it to a tool (JSON, not Python)."""
    import json

    return json.dumps(list(items), ensure_ascii=False)


def quoted(word: str) -> str:
    """`word` as one shell word (shlex.quote's rule, without loading shlex in a hook)."""
    safe = word and all(c.isalnum() or c in "@%+=:,./-_" for c in word)
    return word if safe else "'" + word.replace("'", "'\\''") + "'"


def reason_text(reason: str | None) -> str:
    """A reservation's reason as said to a reader: the daemon's own first-edit reason
    without its machine prefix and signature; "" for none."""
    if not reason:
        return ""
    return "reserved on first edit" if reason == AUTO_REASON else reason


# --- what to do next, per surface ----------------------------------------------------


def wait_for(surface: Surface, tool: str, command: str) -> str:
    """How to wait for something held: the same command with `--wait S` at a shell, `tool`
    again with `wait_s` for a model, and both for a hook's reader."""
    if surface is Surface.CLI:
        return "run it again with --wait S to wait for it"
    if surface is Surface.MCP:
        return f"call {tool} again with wait_s (at most {MCP_WAIT_S}) to wait for it"
    return f"call {tool} again with wait_s to wait for it (`{command} --wait S` in a shell)"


def hand_over(surface: Surface, agent: str, patterns: Sequence[str]) -> str:
    """How to ask `agent` to hand reserved `patterns` over (a release request)."""
    shell = f"coord request {' '.join(quoted(p) for p in patterns)} --wait {SHELL_WAIT_S}"
    if surface is Surface.CLI:
        return f"ask {agent} to hand it over: `{shell}`"
    call = f"request_release with patterns {json_list(patterns)}"
    if surface is Surface.MCP:
        return f"ask {agent} to hand it over: {call}"
    return f"ask {agent} to hand it over: {call} (`{shell}` in a shell)"


# --- refusals ------------------------------------------------------------------------


def holder(agent: str, expires_at: str, now: float | None = None, what: str = "lease") -> str:
    """`held by codex-2, lease ending in 9 min (13:42Z)`: who, and when it ends unless
    renewed (a holder that keeps calling keeps it, so not "free then")."""
    return f"held by {agent}, {what} ending {when(expires_at, now)}"


def slot_full(
    surface: Surface, name: str, holders: Sequence[Mapping[str, Any]], now: float | None = None
) -> str:
    """A slot with no free unit: who holds it, when it frees, how to wait for it."""
    first = holders[0]
    capacity = first.get("capacity") or len(holders)
    more = f" (and {len(holders) - 1} more)" if len(holders) > 1 else ""
    command = f"coord slot acquire {quoted(name)}"
    return (
        f"slot {name} is full ({len(holders)} of {capacity}):"
        f" {holder(first['agent'], first['expires_at'], now)}{more};"
        f" {wait_for(surface, 'acquire_slot', command)}, or do other work first"
    )


def reserved(
    surface: Surface, conflicts: Sequence[Mapping[str, Any]], now: float | None = None
) -> str:
    """A reservation refused: what of yours overlaps whose, until when, for which task,
    and the ways on (work elsewhere, wait, ask for a hand-over)."""
    first = conflicts[0]["reservation"]
    others = len({c["reservation"]["id"] for c in conflicts}) - 1
    more = f" (and {plural(others, 'other reservation')})" if others else ""
    task = f" for task #{first['task_id']}" if first.get("task_id") is not None else ""
    why = reason_text(first.get("reason"))
    mine = conflicts[0]["pattern"]
    overlap = "is" if mine == first["pattern"] else f"overlaps {first['pattern']},"
    wait = wait_for(surface, "reserve_paths", f"coord reserve {quoted(mine)}")
    return (
        f"{mine} {overlap} held by {first['agent']}{task}{f' ({why})' if why else ''},"
        f" ending {when(first['expires_at'], now)}{more}; work on other files, {wait},"
        f" or {hand_over(surface, first['agent'], [first['pattern']])}"
    )


def path_reserved(
    surface: Surface,
    path: str,
    reservation: Mapping[str, Any],
    now: float | None = None,
) -> str:
    """Why an edit of `path` is denied: the exclusive reservation that covers it, whose,
    until when, for which task and why, and what to do."""
    r = reservation
    task = f" for task #{r['task_id']}" if r.get("task_id") is not None else ""
    why = reason_text(r.get("reason"))
    return (
        f"{path} is reserved by {r['agent']}{task} (exclusive, pattern {r['pattern']}"
        f"{f'; {why}' if why else ''}), ending {when(r['expires_at'], now)};"
        f" {hand_over(surface, r['agent'], [r['pattern']])}, or pick other work"
    )


def landing_turn(surface: Surface, landing_id: int, ahead: Sequence[Mapping[str, Any]]) -> str:
    """A landing started before its turn: what is ahead of it, and how to wait."""
    first = ahead[0]
    more = f" and {len(ahead) - 1} more" if len(ahead) > 1 else ""
    step = {
        Surface.CLI: "wait for your turn: `coord land` waits by default (--wait S to bound it)",
        Surface.MCP: "call land again to wait for your turn",
        Surface.HOOK: "wait for your turn: land again (`coord land` in a shell)",
    }[surface]
    return (
        f"landing #{landing_id} is queued behind #{first['id']} ({first['branch']} of"
        f" {first['agent']}){more}; {step}"
    )


def wire_words(surface: Surface, message: str) -> str:
    """A daemon message with the wire field it names said as the surface names it."""
    if surface is Surface.CLI:
        return message.replace("(`wait_s`)", "(--wait S)")
    if surface is Surface.HOOK:
        return message.replace("(`wait_s`)", "(wait_s, or --wait S in a shell)")
    return message


def explain(
    surface: Surface,
    kind: str,
    data: Mapping[str, Any],
    now: float | None = None,
) -> str | None:
    """A refusal with structure (`kind` and `data`) said anew for `surface`, with what to do
    next; None for any other (its message is said as it is, `refusal`)."""
    if kind == "conflict" and data.get("slot") and data.get("holders") and data.get("retry_at"):
        return slot_full(surface, str(data["slot"]), data["holders"], now)
    if kind == "reserved" and data.get("conflicts"):
        return reserved(surface, data["conflicts"], now)
    landing = data.get("landing")
    if kind == "conflict" and isinstance(landing, Mapping) and data.get("ahead"):
        return landing_turn(surface, int(landing["id"]), data["ahead"])
    return None


def refusal(
    surface: Surface,
    kind: str,
    message: str,
    data: Mapping[str, Any],
    now: float | None = None,
) -> str:
    """A refusal (`kind`, the daemon's `message` and `data`) said for `surface`: `explain`'s
    words where it has them, else the message with its wire words translated."""
    return explain(surface, kind, data, now) or wire_words(surface, message)

"""Which assigned tasks an agent was already told about (by session start or a wake-up),
so a tab that chose not to take a task is not woken for it again and again;
(issue 34) the messages it is told, each once (`take_unread`); and (issue 43)
whether it was told that its board cannot be reached.

A task is remembered by its id and creation time: ids are never reused
within one database, and the time tells a task of a database made afresh
at the same place from the one that had the id before.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import msgspec

from coordd_apps.hooks.guard import remedy
from coordd_client.client import Client
from coordd_wire.errors import CoordError
from coordd_wire.method_table import call
from coordd_wire.paths import state_dir
from coordd_wire.wire import Task

#: Remember at most this many tasks per agent (the newest).
KEEP = 1000


def _file(agent: str) -> Path:
    name = hashlib.sha1(agent.encode()).hexdigest()[:16]
    return state_dir() / "reported" / f"{name}.json"


def _key(task: Task) -> str:
    return f"{task.id}@{task.created_at}"


def _load(agent: str) -> list[str]:
    try:
        keys = json.loads(_file(agent).read_text())
    except (OSError, ValueError):
        return []
    return [k for k in keys if isinstance(k, str)] if isinstance(keys, list) else []


def was_reported(agent: str, task: Task, known: list[str] | None = None) -> bool:
    return _key(task) in (known if known is not None else _load(agent))


def reported(agent: str) -> list[str]:
    return _load(agent)


def remember(agent: str, tasks: list[Task]) -> None:
    if not tasks:
        return
    keys = _load(agent)
    keys += [k for k in map(_key, tasks) if k not in keys]
    path = _file(agent)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(keys[-KEEP:]))
    temporary.replace(path)


# --- messages (1.2 section 12): told once, by the daemon's read cursor ----------

#: Messages read per delivery: more than this waits for the next hook.
PER_DELIVERY = 5
#: The bound on one delivery's text (about 400 tokens).
DELIVERY_CHARS = 1600


class _Peek(msgspec.Struct):
    """How many messages an inbox answer holds, read without decoding them."""

    messages: list[msgspec.Raw] = msgspec.field(default_factory=list)


_peek = msgspec.json.Decoder(_Peek)


def holds_messages(result: msgspec.Raw) -> bool:
    """Whether a `message.read` or `message.wait` result has any message in it."""
    return bool(_peek.decode(result).messages)


def take_unread(client: Client, agent: str) -> str:
    """The agent's unread messages as context text, acknowledged; "" when there are none
    (or the daemon predates messages).

    Read raw first: a hook with nothing to show (most of them) never loads the message
    types or their rendering (`bench/hooks.py` times each hook).
    """
    params = {"agent": agent, "limit": PER_DELIVERY}
    try:
        read = call("message.read", params).as_type(msgspec.Raw)
        result = client.send(read, timeout_s=client.timeout_s)
        if not holds_messages(result):
            return ""
        from coordd_apps.wording import render_messages
        from coordd_wire.wire_messages import InboxResult

        found = msgspec.json.decode(result, type=InboxResult)
        client.ack_messages(found.messages[-1].id, agent=agent)
    except (CoordError, msgspec.DecodeError):
        return ""
    text = render_messages.new_messages(found.messages)
    if found.more:
        text += "\n(more unread: read_messages, or `coord inbox`)"
    if len(text) > DELIVERY_CHARS:
        text = text[: DELIVERY_CHARS - 40] + "…\n(cut: read_messages shows them whole)"
    return text


# --- a board that cannot be reached (issue 43): told once per outage -------------
#
# A board that stops answering fails every hook of every tab: the edit guard, which
# says so for each edit it lets through unchecked (that edit's verdict), and the hooks
# after a tool and at a prompt, which have nothing to decide and would otherwise repeat
# the same warning after every shell command. Those say it once per outage: the first
# hook that finds the board gone tells the model and leaves a mark in the state
# directory; the next hook that reaches the board removes it, so the next outage is
# told again. (Here, not in a module of its own: every hook that needs it loads this
# one anyway.)


def _outage_mark(agent: str) -> Path:
    name = hashlib.sha1(agent.encode()).hexdigest()[:16]
    return state_dir() / "unreachable" / name


def told_unreachable(agent: str) -> None:
    """Remember that `agent` has been told its board cannot be reached."""
    path = _outage_mark(agent)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.touch()
    except OSError:
        pass  # at worst the next hook says it again


def first_unreachable_notice(agent: str) -> bool:
    """True when `agent` has not yet been told of this outage; it then counts as told."""
    if _outage_mark(agent).exists():
        return False
    told_unreachable(agent)
    return True


def reached_board(agent: str) -> None:
    """The board answered `agent`'s hook: the next outage is news again."""
    try:
        _outage_mark(agent).unlink(missing_ok=True)
    except OSError:
        pass


def unreachable_notice(failure: CoordError) -> str:
    """What the hooks after a tool and at a prompt tell the model, once per outage."""
    return (
        f"coord: the coordd board cannot be reached ({failure.message}). Until it answers,"
        " edits are not recorded, the edit guard says for each edit whether it goes ahead"
        " unchecked, and messages from other agents are not delivered. Mention this to"
        f" the user. {remedy(failure)}"
    ).rstrip()

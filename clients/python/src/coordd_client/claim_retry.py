"""A claim whose answer is lost is asked again, with the same key (docs/PROTOCOL-1.2.md 5a).

A claim can be made durable and its answer lost with the daemon (kill -9
between a group commit and its replies). Asked again as a new call,
`task.claim_next` would hand out a second task and the first would stay
held, by a worker that never heard of it, until its lease ran out (issue 44
item 7). So each claim goes out with a `request_key` of its own, and when
its answer is lost (the connection broke, or no answer came: outcome
unknown) the clients ask again, on a new connection, with the same key and
`repeat`, while the daemon is away, for a bounded time: the daemon answers a
repeat with what the first call won.

Shared by the blocking client, the trio client and the MCP link; each brings
its own way to send on the connection it has and on a new one. Imported at a
claim's first use, so a hook that never claims loads none of it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from coordd_client import methods
from coordd_wire.errors import DaemonUnavailable, Overloaded, ShuttingDown

R = TypeVar("R")

#: `server.info.features` names it when the daemon takes `request_key` on claims.
FEATURE = "claim_request_key"
#: Seconds a lost claim is asked again while the daemon is away: a restart (systemd,
#: launchd, autostart) takes one or two; much longer and the caller should hear of it.
RETRY_S = 15.0
#: Seconds between attempts while the daemon is away (doubling up to the cap).
FIRST_PAUSE_S = 0.05
MAX_PAUSE_S = 1.0
#: The errors that mean "the daemon is away for now", not "the daemon said no".
AWAY = (DaemonUnavailable, ShuttingDown, Overloaded)


def new_key() -> str:
    """128 random bits as 32 hex digits: never the key of another call."""
    return os.urandom(16).hex()


def keyed(call: methods.Call[R]) -> methods.Call[R]:
    """The call with a fresh `request_key`; or, if the caller gave its own, a `repeat`:
    it asks what an earlier call with that key won."""
    if (call.params or {}).get("request_key") is None:
        return call.with_params(request_key=new_key())
    return repeated(call)


def repeated(call: methods.Call[R]) -> methods.Call[R]:
    """The call asked again: the daemon first looks for what its key won (a lookup it
    spares a first attempt, which cannot have won anything yet)."""
    return call.with_params(repeat=True)


def answer_lost(exc: BaseException) -> bool:
    """Whether the request may have reached the daemon and its answer did not come back."""
    return isinstance(exc, DaemonUnavailable) and exc.data.get("outcome") == "unknown"


def _gave_up(call: methods.Call[R], within_s: float, last: BaseException) -> DaemonUnavailable:
    """Said so that the caller can still learn what it holds: the key is in the error."""
    key = (call.params or {}).get("request_key")
    message = getattr(last, "message", str(last))
    return DaemonUnavailable(
        f"{call.method}: its answer was lost and the daemon did not answer again within"
        f" {within_s:g} s (last: {message}); the claim may have been made: ask again with"
        f" request_key {key} to learn what it won (coord: --request-key {key})",
        outcome="unknown",
        request_key=key,
    )


def retrying(
    call: methods.Call[R],
    send: Callable[[methods.Call[R]], R],
    within_s: float = RETRY_S,
) -> R:
    """`send(call)`; once its answer is lost, `send` its repeat while the daemon is away.

    `send` reconnects by itself (the blocking client does on its next call).
    Only a lost answer starts the retries: a daemon that is not there at the
    first attempt, or says no, is reported as before.
    """
    try:
        return send(call)
    except DaemonUnavailable as exc:
        if not answer_lost(exc):
            raise
    again = repeated(call)
    deadline = time.monotonic() + within_s
    pause = FIRST_PAUSE_S
    while True:
        try:
            return send(again)
        except AWAY as exc:
            if time.monotonic() + pause > deadline:
                raise _gave_up(call, within_s, exc) from None
            time.sleep(pause)
            pause = min(pause * 2, MAX_PAUSE_S)


async def retrying_async(
    call: methods.Call[R],
    send: Callable[[methods.Call[R]], Awaitable[R]],
    send_again: Callable[[methods.Call[R]], Awaitable[R]],
    sleep: Callable[[float], Awaitable[object]],
    within_s: float = RETRY_S,
) -> R:
    """`retrying` for trio: `send` on the connection in hand, `send_again` on a new one
    (a trio connection that broke stays broken; its owner replaces it). `sleep` is
    `trio.sleep`, passed in: trio is the `trio` extra's, and only the modules that
    need it import it (the blocking client imports this module too)."""
    try:
        return await send(call)
    except DaemonUnavailable as exc:
        if not answer_lost(exc):
            raise
    again = repeated(call)
    deadline = time.monotonic() + within_s
    pause = FIRST_PAUSE_S
    while True:
        try:
            return await send_again(again)
        except AWAY as exc:
            if time.monotonic() + pause > deadline:
                raise _gave_up(call, within_s, exc) from None
            await sleep(pause)
            pause = min(pause * 2, MAX_PAUSE_S)

"""The error codes of PROTOCOL.md section 3, and one exception per kind.

The daemon raises these inside its handlers and turns them into error
responses at one boundary; the clients raise them from error responses. One
tree serves both sides, so a code can never mean two things.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

from coordd_wire import wire

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
NOT_FOUND = -32001
CONFLICT = -32002
LEASE_LOST = -32003
OVERLOADED = -32004
SHUTTING_DOWN = -32005


class CoordError(Exception):
    """Base of every error coordd reports on the wire."""

    code: ClassVar[int] = INTERNAL_ERROR
    kind: ClassVar[str] = "internal_error"

    def __init__(self, message: str, **data: Any) -> None:
        super().__init__(message)
        self.message = message
        self.data: dict[str, Any] = {"kind": self.kind, **data}


class ProtocolError(CoordError):
    """The peer broke the protocol (bad JSON, bad envelope, unknown method, bad params)."""


class ParseError(ProtocolError):
    code = PARSE_ERROR
    kind = "parse_error"


class InvalidRequest(ProtocolError):
    code = INVALID_REQUEST
    kind = "invalid_request"


class FrameTooLargeError(InvalidRequest):
    kind = "frame_too_large"


class MethodNotFound(ProtocolError):
    code = METHOD_NOT_FOUND
    kind = "method_not_found"


class InvalidParams(ProtocolError):
    code = INVALID_PARAMS
    kind = "invalid_params"


class RecipientNeverSeen(InvalidParams):
    """1.2 section 12: a message to a name the daemon has never seen, past its cap.

    Most such names are typos, and every message kept for one is kept for
    nobody: the daemon refuses loudly rather than store without end or drop in
    silence. `data.agent` is the name, `data.unread` and `data.limit` the count
    that was reached. Not retryable: it clears when the name is first seen."""

    kind = "recipient_never_seen"


class InternalError(CoordError):
    code = INTERNAL_ERROR
    kind = "internal_error"


class NotFound(CoordError):
    code = NOT_FOUND
    kind = "not_found"


class Conflict(CoordError):
    code = CONFLICT
    kind = "conflict"

    @property
    def task(self) -> wire.Task | None:
        """The task as it stands (`data.task`), where one is involved."""
        return _task_in(self.data)


class Blocked(Conflict):
    """1.1: a claim of a pending task whose dependencies are not done; `data.task` says which."""

    kind = "blocked"


class Reserved(Conflict):
    """1.1: a reservation refused; `data.conflicts` names what is in the way."""

    kind = "reserved"

    @property
    def conflicts(self) -> list[wire.PatternConflict]:
        """Each of my patterns paired with a live reservation in its way."""
        return msgspec.convert(self.data.get("conflicts") or [], list[wire.PatternConflict])


class AgentEnded(Conflict):
    """1.2 (flag `agent_ended`): a hand-over to an agent whose end was reported;
    `data.agent` names it and `data.ended_at` says when it ended."""

    kind = "agent_ended"


class LeaseLost(CoordError):
    code = LEASE_LOST
    kind = "lease_lost"

    @property
    def task(self) -> wire.Task | None:
        """The task as it stands now: who holds it, with which fence."""
        return _task_in(self.data)


def _task_in(data: dict[str, Any]) -> wire.Task | None:
    task = data.get("task")
    if task is None:
        return None
    if isinstance(task, msgspec.Raw | bytes | str):  # the daemon's side: encoded already
        return msgspec.json.decode(task, type=wire.Task)
    return msgspec.convert(task, wire.Task)


class Overloaded(CoordError):
    code = OVERLOADED
    kind = "overloaded"


class ShuttingDown(CoordError):
    code = SHUTTING_DOWN
    kind = "shutting_down"


class DaemonUnavailable(CoordError):
    """Client side only: no daemon answered, or the connection dropped (outcome unknown).

    -32000 is the start of JSON-RPC's implementation-defined server-error range."""

    code = -32000
    kind = "daemon_unavailable"


class UntrustedSocket(CoordError):
    """Client side only: the socket is served by another uid, so it was not our daemon.

    Not a `DaemonUnavailable`: starting a daemon of our own would not help."""

    code = -32000
    kind = "untrusted_socket"


class SeveralBoards(CoordError):
    """Client side only: the socket was derived, nobody answers on it, and more than one of
    this user's boards is live elsewhere (docs/PROTOCOL-1.2.md section 1a): the client
    cannot tell which one its user means, and starting a daemon would make a third.

    Not a `DaemonUnavailable`: starting a daemon is exactly what must not happen."""

    code = -32000
    kind = "several_boards"


class WrongBoard(CoordError):
    """Client side only: the daemon reached serves another board than the one the
    surface's tab works on (docs/PROTOCOL-1.2.md section 1b; `boards.py`)."""

    code = -32000
    kind = "wrong_board"


_BY_KIND: dict[str, type[CoordError]] = {
    cls.kind: cls
    for cls in (
        ParseError,
        InvalidRequest,
        FrameTooLargeError,
        MethodNotFound,
        InvalidParams,
        RecipientNeverSeen,
        InternalError,
        NotFound,
        Conflict,
        Blocked,
        Reserved,
        AgentEnded,
        LeaseLost,
        Overloaded,
        ShuttingDown,
    )
}
_BY_CODE: dict[int, type[CoordError]] = {cls.code: cls for cls in reversed(list(_BY_KIND.values()))}
#: The kinds a daemon sends (PROTOCOL.md section 3), each rebuilt as its own exception.
WIRE_KINDS = frozenset(_BY_KIND)
#: The kinds a client raises itself, never sent by a daemon.
CLIENT_KINDS = frozenset(
    {DaemonUnavailable.kind, UntrustedSocket.kind, SeveralBoards.kind, WrongBoard.kind}
)


def error_from_wire(error: dict[str, Any]) -> CoordError:
    """Rebuild the exception a daemon's `error` member describes."""
    data = dict(error.get("data") or {})
    kind = data.pop("kind", None)
    cls = _BY_KIND.get(str(kind)) or _BY_CODE.get(int(error.get("code", 0)), CoordError)
    exc = cls(str(error.get("message", "")), **data)
    exc.data["kind"] = kind or cls.kind
    return exc

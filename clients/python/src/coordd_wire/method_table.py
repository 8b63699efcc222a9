"""The method table: one entry per RPC, read by both ends (issue 45 item 1).

Each entry names its method, its params Struct, its result Struct and its traits, as
the MCP SDK's table of methods and beads' `internal/rpc/protocol.go` do. The
daemon registers a handler against each entry (`coordd.methods.registry`, which fails
at start on a method missing here or an entry with no handler); the client builders
(`coordd_client.methods*`) build a `Call` from it; `PROJECT_METHODS`, `KEYED_METHODS`,
`FEATURE_METHODS`, `OPT_IN_EVENT_TYPES`, the TypeScript wire (`scripts/ts_wire.py`),
docs/PROTOCOL.md's reference (`scripts/protocol_reference.py`) and the parity tests
are derived from it.

Each entry holds its params and result Structs themselves, imported here: the hooks'
cost is measured in time by the benchmark (`bench/hooks.py`), and an everyday hook is
served by a warm quick server that loaded all of this once (issue 46).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from coordd_wire import params as P
from coordd_wire import params_edits as PE
from coordd_wire import params_messages as PM
from coordd_wire import params_slots as PS
from coordd_wire import params_usage as PU
from coordd_wire import wire as W
from coordd_wire import wire_edits as WE
from coordd_wire import wire_messages as WM
from coordd_wire import wire_slots as WS
from coordd_wire import wire_usage as WU
from coordd_wire.server_info import ServerInfo
from coordd_wire.wire import FEATURE_OF_EVENT

R = TypeVar("R")
T = TypeVar("T")


class Call(Generic[R]):
    """A method name, its params and the type its result decodes to: what a client sends.

    A builder makes one (`coordd_client.methods`); `with_params` and `as_type` derive
    another, so a caller that needs a changed param or a different decoding (a raw
    page, a dict) still names its method through the table, never as a bare string.
    """

    __slots__ = ("_result_type", "method", "params", "waits_s")

    def __init__(
        self,
        method: str,
        params: dict[str, Any] | None,
        result_type: type[R] | None = None,
        waits_s: float = 0.0,
    ) -> None:
        self.method = method
        self.params = params
        #: None: the one the method table names, read from its entry when asked for.
        self._result_type = result_type
        #: Seconds the daemon may rightly take before answering (a wait's own timeout).
        self.waits_s = waits_s

    @property
    def result_type(self) -> type[R]:
        if self._result_type is None:
            self._result_type = TABLE[self.method].result_type()
        return self._result_type

    def with_params(self, **changes: Any) -> Call[R]:
        """This call with `changes` merged into its params (a param set to None is
        omitted when sent, as if never given)."""
        params = {**(self.params or {}), **changes}
        return Call(self.method, params, self._result_type, self.waits_s)

    def as_type(self, result_type: type[T]) -> Call[T]:
        """This call with its result decoded as `result_type` (a narrower Struct, a raw
        page, `dict`)."""
        return Call(self.method, self.params, result_type, self.waits_s)

    def __repr__(self) -> str:
        return f"Call({self.method!r}, {self.params!r})"


@dataclass(frozen=True)
class Rpc:
    """One RPC (PROTOCOL.md section 6, docs/PROTOCOL-1.2.md) and its traits."""

    name: str
    #: Its params Struct (`coordd_wire.params*`).
    params: type[Any]
    #: Its result Struct (`coordd_wire.wire*`); None: the result is `{}`.
    result: type[Any] | None
    #: It takes a `project` that a client's default project fills in when omitted.
    project: bool = False
    #: It may wait long (its own `timeout_s` or `wait_s`) and ends with its connection.
    waits: bool = False
    #: A plain write: one writer transaction and nothing else (the writer's fast path).
    writes: bool = False
    #: Its answer can be megabytes: a connection holds only a few such answers at once.
    large: bool = False
    #: It never waits: a lone request is answered in the connection's read loop.
    inline: bool = False
    #: The `server.info.features` flag a client checks first; None: protocol 1.0.
    feature: str | None = None
    #: The clients send it with a fresh `request_key` and ask again, as a `repeat`, when
    #: its answer is lost (`claim_retry`, docs/PROTOCOL-1.2.md section 5a).
    keyed: bool = False
    #: The clients ask it again with `repeat` when its answer is lost, once the daemon
    #: names `holder_repeat` (`claim_retry`, docs/PROTOCOL-1.2.md section 5b).
    repeatable: bool = False

    def params_type(self) -> type[Any]:
        return self.params

    def result_type(self) -> type[Any]:
        return dict if self.result is None else self.result

    def call(self, params: dict[str, Any] | None, *, waits_s: float = 0.0) -> Call[Any]:
        return Call(self.name, params, None, waits_s)


#: Every RPC, protocol 1.0's first, then each feature's in the order its flag brought
#: them (docs/PROTOCOL.md's feature table lists them so).
ENTRIES: tuple[Rpc, ...] = (
    Rpc("ping", P.NoParams, W.PingResult, inline=True),
    Rpc("server.info", P.NoParams, ServerInfo),
    Rpc("task.post", P.PostParams, W.PostResult, project=True, writes=True),
    Rpc("task.get", P.GetParams, W.TaskResult),
    Rpc("task.list", P.ListParams, W.ListResult, project=True, large=True),
    Rpc("task.claim", P.ClaimParams, W.ClaimResult, writes=True, keyed=True),
    Rpc(
        "task.claim_next",
        P.ClaimNextParams,
        W.MaybeTaskResult,
        project=True,
        writes=True,
        keyed=True,
    ),
    Rpc("task.renew", P.RenewParams, W.TaskResult, writes=True),
    Rpc("task.release", P.ReleaseParams, W.TaskResult, writes=True, repeatable=True),
    Rpc("task.complete", P.CompleteParams, W.CompleteResult, writes=True),
    Rpc("task.fail", P.FailParams, W.TaskResult, writes=True, repeatable=True),
    Rpc("task.cancel", P.CancelParams, W.TaskResult, writes=True),
    Rpc("task.reopen", P.ReopenParams, W.TaskResult, writes=True),
    Rpc("task.wait", P.WaitParams, W.WaitResult, project=True, waits=True),
    Rpc("agent.heartbeat", P.HeartbeatParams, W.HeartbeatResult, writes=True),
    Rpc("agent.list", P.NoParams, W.AgentsResult),
    Rpc("events.since", P.EventsSinceParams, W.EventsResult, project=True, large=True),
    Rpc("events.subscribe", P.SubscribeParams, W.SubscribeResult),
    Rpc("events.unsubscribe", P.UnsubscribeParams, None),
    # 1.1 (PROTOCOL.md section 6)
    Rpc("task.assign", P.AssignParams, W.TaskResult, writes=True, feature="assignee"),
    *(
        Rpc(name, params, result, project=True, feature="reservations", **traits)
        for name, params, result, traits in (
            ("reservation.acquire", P.AcquireParams, W.ReservationsResult, {"waits": True}),
            (
                "reservation.release",
                P.ReleaseReservationsParams,
                W.ReleasedResult,
                {"writes": True},
            ),
            ("reservation.check", P.CheckParams, W.CheckResult, {}),
            ("reservation.list", P.ListReservationsParams, W.ReservationsResult, {"large": True}),
        )
    ),
    # 1.2 (docs/PROTOCOL-1.2.md)
    Rpc(
        "agent.release",
        P.ReleaseAgentParams,
        W.ReleaseAgentResult,
        writes=True,
        feature="agent_release",
    ),
    Rpc("agent.end", P.EndAgentParams, W.EndAgentResult, writes=True, feature="agent_ended"),
    *(
        Rpc(name, params, result, project=True, feature="file_edits", **traits)
        for name, params, result, traits in (
            ("file.guard", PE.GuardParams, WE.GuardResult, {}),
            ("file.record_edit", PE.RecordEditParams, WE.RecordResult, {"writes": True}),
            ("file.record_read", PE.RecordReadParams, WE.RecordResult, {"writes": True}),
            ("file.recent", PE.RecentParams, WE.RecentResult, {}),
        )
    ),
    *(
        Rpc(name, params, result, feature="messages", **traits)
        for name, params, result, traits in (
            ("message.send", PM.SendParams, WM.SendResult, {"project": True, "writes": True}),
            ("message.read", PM.ReadParams, WM.InboxResult, {"large": True}),
            ("message.ack", PM.AckParams, WM.AckResult, {"writes": True}),
            ("message.wait", PM.MessageWaitParams, WM.InboxResult, {"waits": True, "large": True}),
            ("message.get", PM.MessageGetParams, WM.MessageResult, {}),
        )
    ),
    Rpc(
        "request.release",
        PM.RequestReleaseParams,
        WM.RequestResult,
        project=True,
        writes=True,
        feature="release_requests",
    ),
    Rpc(
        "request.answer",
        PM.AnswerParams,
        WM.AnswerResult,
        writes=True,
        feature="release_requests",
    ),
    *(
        Rpc(name, params, result, project=True, feature=feature, **traits)
        for name, params, result, feature, traits in (
            ("slot.acquire", PS.SlotAcquireParams, WS.SlotResult, "slots", {"waits": True}),
            ("slot.release", PS.SlotReleaseParams, WS.Released, "slots", {"writes": True}),
            ("slot.list", PS.SlotListParams, WS.SlotList, "slots", {"large": True}),
            ("port.lease", PS.PortLeaseParams, WS.SlotResult, "slots", {"writes": True}),
            ("land.enqueue", PS.LandEnqueueParams, WS.Enqueued, "landing_queue", {"writes": True}),
            ("land.start", PS.LandStartParams, WS.Started, "landing_queue", {"waits": True}),
            ("land.finish", PS.LandFinishParams, WS.Finished, "landing_queue", {"writes": True}),
            ("land.list", PS.LandListParams, WS.LandingList, "landing_queue", {"large": True}),
        )
    ),
    # issue 48 (docs/PROTOCOL-1.2.md section 15): the token ledger
    Rpc(
        "usage.report",
        PU.UsageReportParams,
        WU.UsageReportResult,
        project=True,
        feature="token_ledger",
    ),
    Rpc(
        "cost.query",
        PU.CostQueryParams,
        WU.CostResult,
        project=True,
        large=True,
        feature="token_ledger",
    ),
)

#: {method: its entry}.
TABLE: dict[str, Rpc] = {entry.name: entry for entry in ENTRIES}
if len(TABLE) != len(ENTRIES):
    raise ValueError("a method is in the table twice")


def call(method: str, params: dict[str, Any] | None, *, waits_s: float = 0.0) -> Call[Any]:
    """A `Call` of `method`, decoding the result its entry names (a builder's last line)."""
    return TABLE[method].call(params, waits_s=waits_s)


#: Methods whose `project` a client's default fills in.
PROJECT_METHODS = frozenset(entry.name for entry in ENTRIES if entry.project)

#: Methods a client sends with a `request_key` and asks again when their answer is lost.
KEYED_METHODS = frozenset(entry.name for entry in ENTRIES if entry.keyed)
REPEATABLE_METHODS = frozenset(entry.name for entry in ENTRIES if entry.repeatable)

#: The methods each feature brings: a client checks the flag in `server.info.features`
#: before it calls one, since an older daemon answers them -32601. A 1.0 method needs
#: no flag; a feature that only adds params, result members or bounds brings none.
FEATURE_METHODS: dict[str, tuple[str, ...]] = {}
for _entry in ENTRIES:
    if _entry.feature is not None:
        FEATURE_METHODS[_entry.feature] = (*FEATURE_METHODS.get(_entry.feature, ()), _entry.name)

#: Event types a subscriber gets only by naming them in `types` (task.wait never
#: matches them): the ones a feature brings (`wire.FEATURE_OF_EVENT`), each a feature
#: of this table, since only a method of that feature appends them.
OPT_IN_EVENT_TYPES = frozenset(FEATURE_OF_EVENT)
if not set(FEATURE_OF_EVENT.values()) <= set(FEATURE_METHODS):
    raise ValueError("an opt-in event type's feature brings no method in the table")

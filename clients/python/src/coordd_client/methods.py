"""One builder per RPC, written once for both clients.

Each function turns typed Python arguments into a `Call`: the method name,
its params and the type its result decodes to. `make client-methods` makes each
builder a method of both clients (`rpc_methods.py`, generated; a builder is a
top-level function that builds a literal `call("<method>", ...)`), so the two can
never drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import msgspec

from coordd_client.acks import announced
from coordd_client.human import resolve_assignee
from coordd_wire import method_table, wire
from coordd_wire.method_table import call
from coordd_wire.server_info import ServerInfo

#: What a builder returns: a method of the table, its params and its result type
#: (`method_table.Call`, named here too since every caller builds through this module).
Call = method_table.Call

R = TypeVar("R")


def post(
    title: str,
    *,
    body: str | None = None,
    kind: str | None = None,
    project: str | None = None,
    priority: int | None = None,
    tags: Sequence[str] | None = None,
    agent: str | None = None,
    state: str | None = None,
    idempotency_key: str | None = None,
    depends_on: Sequence[int] | None = None,
    assignee: str | None = None,
    budget: int | None = None,
    budget_release: bool | None = None,
) -> Call[wire.PostResult]:
    """`depends_on` and `assignee` need a 1.1 daemon (features `deps`, `assignee`);
    `budget` (tokens the task may cost) a 1.2 one with `token_budgets`."""
    params = {
        "title": title,
        "body": body,
        "kind": kind,
        "project": project,
        "priority": priority,
        "tags": list(tags) if tags is not None else None,
        "agent": agent,
        "state": state,
        "idempotency_key": idempotency_key,
        "depends_on": list(depends_on) if depends_on else None,
        "assignee": _to(assignee),
        "budget": budget,
        "budget_release": budget_release,
    }
    return call("task.post", _announced(params))


def _announced(params: dict[str, Any]) -> dict[str, Any]:
    """`params` with the one rule of an acknowledgement applied (`acks.announced`: an
    ack is posted done, never as work), for a post that names a kind."""
    if params.get("kind") is None:
        return params
    return announced(params)


def _to(assignee: str | None) -> str | None:
    """`human` as an assignee (or a message's `to`, `methods_messages`) is this user's
    `human-<user>` (`human.py`, the one rule)."""
    if assignee != "human":
        return assignee
    return resolve_assignee(assignee)


def with_defaults(call: Call[R], agent: str | None, project: str | None) -> Call[R]:
    """The call with a client's default agent and project where it names neither.

    Only for methods that take them: a default project narrows `task.list`,
    `task.wait` and `events.since` to that project (build the client without
    one to see every project).
    """
    params = call.params
    if params is None or (agent is None and project is None):
        return call  # nothing to fill: no copy on every call of a client without defaults
    filled: dict[str, Any] = {}
    if agent is not None and "agent" in params and params["agent"] is None:
        filled["agent"] = agent
    if project is not None and call.method in PROJECT_METHODS and params.get("project") is None:
        filled["project"] = project
    return call.with_params(**filled)


#: Methods a client sends with a `request_key` and asks again when their answer is lost
#: (`claim_retry`, docs/PROTOCOL-1.2.md section 5a): the method table's `keyed` trait.
KEYED_METHODS = method_table.KEYED_METHODS
REPEATABLE_METHODS = method_table.REPEATABLE_METHODS

#: Methods whose `project` a client's default fills in: the method table's `project` trait.
PROJECT_METHODS = method_table.PROJECT_METHODS


#: An explicit JSON null, for the one param where null differs from omitted.
JSON_NULL = msgspec.Raw(b"null")


def _clean(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if v is not None}


def get(task_id: int) -> Call[wire.TaskResult]:
    return call("task.get", {"id": task_id})


def list_tasks(
    *,
    project: str | None = None,
    state: str | Sequence[str] | None = None,
    kind: str | None = None,
    tag: str | None = None,
    claimed_by: str | None = None,
    after_id: int | None = None,
    limit: int | None = None,
    assignee: str | None = None,
    ready: bool | None = None,
    order: wire.ListOrder | None = None,
    after_priority: int | None = None,
    counts: bool | None = None,
    open_to: str | None = None,
) -> Call[wire.ListResult]:
    state = state if state is None or isinstance(state, str) else list(state)
    return call("task.list", _clean(dict(locals())))  # 1.2 section 6c: order ... open_to


def claim(
    task_id: int,
    agent: str | None = None,
    *,
    lease_s: float | None = None,
    request_key: str | None = None,
    repeat: bool | None = None,
) -> Call[wire.ClaimResult]:
    """Claim pending task `task_id` for `agent` (the client's default agent if None)
    for `lease_s` seconds: `won` says whether this call took it (of claims racing for
    one task exactly one wins; the rest get `won: false` and the task as the winner
    left it). A blocked task raises `Blocked`; one assigned to another agent is lost.

    `request_key` and `repeat` (1.2 section 5a, feature `claim_request_key`): the
    clients add a fresh key themselves when the daemon takes it, and `repeat` when they
    ask again (`claim_retry`); give a key only to learn what an earlier call won (the
    clients then send it as a repeat)."""
    params = {"id": task_id, "agent": agent, "lease_s": lease_s}
    params |= {"request_key": request_key, "repeat": repeat}
    return call("task.claim", params)


def claim_next(
    agent: str | None = None,
    *,
    project: str | None = None,
    kind: str | None = None,
    tags: Sequence[str] | None = None,
    lease_s: float | None = None,
    request_key: str | None = None,
    repeat: bool | None = None,
) -> Call[wire.MaybeTaskResult]:
    """`request_key` and `repeat` as in `claim`: a repeat returns the task that call won."""
    params: dict[str, Any] = {"agent": agent, "project": project, "kind": kind, "lease_s": lease_s}
    params["tags"] = list(tags) if tags else None
    params |= {"request_key": request_key, "repeat": repeat}
    return call("task.claim_next", params)


def renew(
    task_id: int,
    agent: str | None = None,
    *,
    fence: int | None = None,
    lease_s: float | None = None,
) -> Call[wire.TaskResult]:
    params = {"id": task_id, "agent": agent, "fence": fence, "lease_s": lease_s}
    return call("task.renew", params)


def release(
    task_id: int,
    agent: str | None = None,
    *,
    fence: int | None = None,
    assignee: str | None = None,
    repeat: bool | None = None,
) -> Call[wire.TaskResult]:
    """With `assignee` (1.1), hand the task to that agent in the same step. `repeat`
    (1.2 section 5b, feature `holder_repeat`): this call asks again after a lost answer,
    so a release that already took effect answers with the task as it stands."""
    params = {"id": task_id, "agent": agent, "fence": fence, "assignee": _to(assignee)}
    params["repeat"] = repeat
    return call("task.release", params)


def assign(
    task_id: int, assignee: str | None, *, agent: str | None = None
) -> Call[wire.TaskResult]:
    """Set (or, with None, clear) a pending task's assignee (1.1, feature `assignee`)."""
    # None params are dropped as omitted; here null means "clear", so it is sent.
    target = JSON_NULL if assignee is None else _to(assignee)
    params: dict[str, Any] = {"id": task_id, "assignee": target, "agent": agent}
    return call("task.assign", params)


def complete(
    task_id: int,
    agent: str | None = None,
    *,
    fence: int | None = None,
    result: str | None = None,
    then_post: dict[str, Any] | None = None,
) -> Call[wire.CompleteResult]:
    params: dict[str, Any] = {"id": task_id, "agent": agent, "fence": fence, "result": result}
    params["then_post"] = _announced(_clean(then_post)) if then_post else None
    return call("task.complete", params)


def fail(
    task_id: int,
    agent: str | None = None,
    *,
    fence: int | None = None,
    reason: str | None = None,
    retry: bool | None = None,
    repeat: bool | None = None,
) -> Call[wire.TaskResult]:
    """`repeat` as on `release`, for a fail with `retry` (a fail without it is
    recognised as a repeat whatever `repeat` says, PROTOCOL.md section 5)."""
    params = {"id": task_id, "agent": agent, "fence": fence, "reason": reason, "retry": retry}
    params["repeat"] = repeat
    return call("task.fail", params)


def cancel(
    task_id: int, *, agent: str | None = None, reason: str | None = None
) -> Call[wire.TaskResult]:
    return call("task.cancel", {"id": task_id, "agent": agent, "reason": reason})


def reopen(task_id: int, *, agent: str | None = None) -> Call[wire.TaskResult]:
    return call("task.reopen", {"id": task_id, "agent": agent})


def wait(
    *,
    timeout_s: float,
    project: str | None = None,
    kind: str | None = None,
    state: str | Sequence[str] | None = None,
    tag: str | None = None,
    title_contains: str | None = None,
    after_seq: int | None = None,
    assignee: str | None = None,
    ready: bool | None = None,
) -> Call[wire.WaitResult]:
    if state is not None and not isinstance(state, str):
        state = list(state)
    return call("task.wait", _clean(dict(locals())), waits_s=timeout_s)


def heartbeat(
    agent: str | None = None, *, lease_s: float | None = None
) -> Call[wire.HeartbeatResult]:
    return call("agent.heartbeat", {"agent": agent, "lease_s": lease_s})


def release_agent(
    of: str,
    agent: str | None = None,
    *,
    project: str | None = None,
    reason: str | None = None,
) -> Call[wire.ReleaseAgentResult]:
    """Let go of every claim, reservation and pending assignment `of` holds (1.2, feature
    `agent_release`), as `agent` (the caller, named in the history; `of` itself is allowed).

    `project` narrows it to one project; omitted, every project (a client's default
    project does not narrow it: a dead tab's holdings anywhere are dead).
    """
    params = {"agent": agent, "of": of, "project": project, "reason": reason}
    return call("agent.release", params)


def agents() -> Call[wire.AgentsResult]:
    return call("agent.list", None)


def events_since(
    *,
    after_seq: int | None = None,
    limit: int | None = None,
    project: str | None = None,
    types: Sequence[str] | None = None,
    task_id: int | None = None,
) -> Call[wire.EventsResult]:
    """Stored events; `task_id` (protocol 1.1, feature `task_history`) gives one task's history."""
    params: dict[str, Any] = {"after_seq": after_seq, "limit": limit, "project": project}
    params["types"] = list(types) if types else None
    params["task_id"] = task_id
    return call("events.since", params)


def reserve(
    patterns: Sequence[str],
    *,
    agent: str | None = None,
    project: str | None = None,
    exclusive: bool | None = None,
    ttl_s: float | None = None,
    reason: str | None = None,
    task_id: int | None = None,
    wait_s: float | None = None,
) -> Call[wire.ReservationsResult]:
    """All or nothing (feature `reservations`): every pattern is granted, or `Reserved`
    names what is in the way. `wait_s` waits that long for them to come free."""
    params = {
        "patterns": list(patterns),
        "agent": agent,
        "project": project,
        "exclusive": exclusive,
        "ttl_s": ttl_s,
        "reason": reason,
        "task_id": task_id,
        "wait_s": wait_s,
    }
    return call("reservation.acquire", params, waits_s=wait_s or 0.0)


def unreserve(
    patterns: Sequence[str] | None = None,
    *,
    ids: Sequence[int] | None = None,
    agent: str | None = None,
    project: str | None = None,
    of: str | None = None,
) -> Call[wire.ReleasedResult]:
    """Release my reservations in the project (`of`'s, as me: flag `release_reservations_of`):
    these patterns, these ids, or (neither) all."""
    params = {
        "patterns": list(patterns) if patterns else None,
        "ids": list(ids) if ids else None,
        "agent": agent,
        "project": project,
        "of": of,
    }
    return call("reservation.release", params)


def check_paths(
    paths: Sequence[str], *, project: str | None = None, agent: str | None = None
) -> Call[wire.CheckResult]:
    """Live reservations of other agents than `agent` covering each path."""
    params = {"paths": list(paths), "project": project, "agent": agent}
    return call("reservation.check", params)


def reservations(
    *, project: str | None = None, agent: str | None = None
) -> Call[wire.ReservationsResult]:
    """Live reservations; `agent` is a filter here, so no client default fills it."""
    return call("reservation.list", _clean(dict(locals())))


def ping() -> Call[wire.PingResult]:
    return call("ping", None)


def server_info() -> Call[ServerInfo]:
    return call("server.info", None)


def subscribe(
    *,
    after_seq: int | None = None,
    project: str | None = None,
    types: Sequence[str] | None = None,
) -> Call[wire.SubscribeResult]:
    """A subscription's first call: its answer, then `events.event` notifications on this
    connection until it closes (`Client.subscribe`'s `EventStream` drives it; neither
    client offers it as a method, since a stream needs a connection of its own)."""
    params: dict[str, Any] = {"after_seq": after_seq, "project": project}
    params["types"] = list(types) if types else None
    return call("events.subscribe", params)


def unsubscribe(subscription: int) -> Call[dict[str, Any]]:
    """End subscription `subscription` on this connection; the answer is `{}`."""
    return call("events.unsubscribe", {"subscription": subscription})

"""Every tool, declared once: its name (hosts allow-list tools by name, so names are a
contract), its parameters (PROTOCOL.md section 6's, minus `agent` and `project`,
which the server fills in), its result shape and its annotations.

Each tool is a thin adapter over one builder in `coordd_client.methods`, the
same one the CLI and both Python clients use.
"""

from __future__ import annotations

import os
from typing import Annotated

import trio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult
from pydantic import Field

from coordd_apps.mcp_bridge import (
    landing_tools,
    message_tools,
    results,
    slot_tools,
    usage_tools,
)
from coordd_apps.mcp_bridge import models as m
from coordd_apps.mcp_bridge.board import board_result
from coordd_apps.mcp_bridge.bridge import Bridge
from coordd_apps.mcp_bridge.traits import (
    DESTRUCTIVE,
    MAX_WAIT_S,
    PROGRESS_EVERY_S,
    READ_ONLY,
    RETRY_SAFE,
    WRITES,
)
from coordd_client import methods
from coordd_client.worktree import relative_to_board
from coordd_wire import bounds, wire
from coordd_wire.errors import CoordError

Id = m.TaskId
OptFence = Annotated[m.Fence | None, Field(description="your claim's fence; refused if stale")]
OptLease = Annotated[m.LeaseSeconds | None, Field(description="lease seconds (default 600)")]


def register(server: MCPServer, bridge: Bridge) -> None:
    """Add every tool to `server`."""
    _task_tools(server, bridge)
    _waiting_tools(server, bridge)
    _reservation_tools(server, bridge)
    message_tools.register(server, bridge)  # issue 34: messages and release requests
    slot_tools.register(server, bridge)  # issue 35: slots and ports
    landing_tools.register(server, bridge)  # issue 35: the landing queue
    usage_tools.register(server, bridge)  # issue 48: the token ledger


async def _board_reached(bridge: Bridge) -> tuple[str | None, str | None]:
    """(the board id of the daemon this server reaches, why none was reached).

    `coord doctor` starts each host's server as that host does and compares this
    with the board its shell reaches (issue 43); a refusal for another board than
    the tab's still names the board that daemon serves.
    """
    try:
        info = await bridge.link.request(methods.server_info())
    except CoordError as exc:
        reached = exc.data.get("reached")
        kind = exc.data.get("kind", exc.kind)
        return (reached if isinstance(reached, str) else None), f"{kind}: {exc.message}"
    board_id = info.get("board_id")
    return (board_id if isinstance(board_id, str) else None), None


def _task_tools(server: MCPServer, bridge: Bridge) -> None:
    @server.tool(annotations=READ_ONLY)
    async def board(ctx: Context) -> Annotated[CallToolResult, m.BoardResult]:
        """Start every turn here: who you are, your claims and their leases, work assigned to
        you, the most urgent ready tasks, counts by state and who else is working."""
        try:
            result = await board_result(bridge, ctx)
        except CoordError as exc:
            return results.refusal(exc)
        return results.answer(result)

    @server.tool(annotations=READ_ONLY)
    async def whoami(ctx: Context) -> Annotated[CallToolResult, m.WhoamiResult]:
        """The agent name and project this server acts as, where each came from, and the
        socket and board of the daemon it reaches."""
        agent, project = bridge.agent(ctx), bridge.project
        board_id, unreached = await _board_reached(bridge)  # first: the socket in use
        return results.answer(
            {
                "agent": agent.value,
                "agent_source": agent.source,
                "project": project.value,
                "project_source": project.source,
                "socket": str(bridge.link.socket_path),
                "board_id": board_id,
                "board_unreached": unreached,
            }
        )

    @server.tool(annotations=READ_ONLY)
    async def list_tasks(
        ctx: Context,
        *,
        state: m.States | None = None,
        kind: m.Kind | None = None,
        tag: m.Tag | None = None,
        claimed_by: m.Agent | None = None,
        assignee: m.Agent | None = None,
        ready: bool | None = None,
        after_id: m.Seq | None = None,
        limit: m.ListLimit | None = None,
        order: wire.ListOrder | None = None,
        after_priority: m.Priority | None = None,
        counts: bool | None = None,
        open_to: m.Agent | None = None,
    ) -> Annotated[CallToolResult, m.ListResult]:
        """Tasks on this project's board, ascending id; page with after_id = next_after_id.
        order "urgent": most urgent first (as claim_next picks), paged with after_id and
        after_priority = next_after_id and next_after_priority; counts: how many match,
        by state; open_to: only tasks unassigned or assigned to that agent."""
        call = methods.list_tasks(
            state=state,
            kind=kind,
            tag=tag,
            claimed_by=claimed_by,
            assignee=assignee,
            ready=ready,
            after_id=after_id,
            limit=limit,
            order=order,
            after_priority=after_priority,
            counts=counts,
            open_to=open_to,
        )
        return await bridge.answer(call, ctx)

    @server.tool(annotations=READ_ONLY)
    async def get_task(ctx: Context, *, id: Id) -> Annotated[CallToolResult, m.TaskResult]:
        """One task, whole: body, holder, fence, dependencies."""
        return await bridge.answer(methods.get(id), ctx)

    @server.tool(annotations=WRITES)
    async def post_task(
        ctx: Context,
        *,
        title: m.Title,
        body: m.Text | None = None,
        kind: m.Kind | None = None,
        priority: m.Priority | None = None,
        tags: m.Tags | None = None,
        state: wire.PostState | None = None,
        idempotency_key: m.IdempotencyKey | None = None,
        depends_on: m.DependsOn | None = None,
        assignee: m.Agent | None = None,
        budget: Annotated[int, m.field(bounds.BUDGET, "tokens it may cost (all kinds)")]
        | None = None,
        budget_release: bool | None = None,
    ) -> Annotated[CallToolResult, m.PostResult]:
        """Post work (kind bug, task, handoff, question...) or an announcement nobody claims:
        kind ack is always posted done (state "done" announces any kind). depends_on: ids
        it waits for; assignee: the one agent who may claim it ("human": the user, a gate
        they approve or reject in coord web); budget: tokens it may cost, warned at 80% and
        100% (issue 48); budget_release: release its holder's claim at 100%."""
        try:
            call = methods.post(
                title,
                body=body,
                kind=kind,
                priority=priority,
                tags=tags,
                state=state,
                idempotency_key=idempotency_key or bridge.fresh_idempotency_key(),
                depends_on=depends_on,
                assignee=assignee,
                budget=budget,
                budget_release=budget_release,
            )
        except CoordError as exc:  # an ack asked for as pending work (acks.announced)
            return results.refusal(exc)
        return await bridge.answer(call, ctx)

    @server.tool(annotations=RETRY_SAFE)
    async def claim_task(
        ctx: Context,
        *,
        id: Id,
        lease_s: OptLease = None,
        request_key: m.RequestKey | None = None,
    ) -> Annotated[CallToolResult, m.ClaimResult]:
        """Claim one task. Exactly one claimant wins; won false means someone else holds it
        (a normal answer: pick other work). Keep the returned fence."""
        call = methods.claim(id, lease_s=lease_s, request_key=request_key)
        return await bridge.answer(call, ctx)

    @server.tool(annotations=RETRY_SAFE)
    async def claim_next(
        ctx: Context,
        *,
        kind: m.Kind | None = None,
        tags: m.Tags | None = None,
        lease_s: OptLease = None,
        request_key: m.RequestKey | None = None,
    ) -> Annotated[CallToolResult, m.MaybeTaskResult]:
        """Claim the most urgent ready task (yours or unassigned); task null if none."""
        call = methods.claim_next(kind=kind, tags=tags, lease_s=lease_s, request_key=request_key)
        return await bridge.answer(call, ctx)

    @server.tool(annotations=RETRY_SAFE)
    async def renew_task(
        ctx: Context,
        *,
        id: Id,
        fence: OptFence = None,
        lease_s: OptLease = None,
    ) -> Annotated[CallToolResult, m.TaskResult]:
        """Extend your lease on a task you hold (heartbeat renews all of them at once)."""
        return await bridge.answer(methods.renew(id, fence=fence, lease_s=lease_s), ctx)

    @server.tool(annotations=RETRY_SAFE)
    async def release_task(
        ctx: Context,
        *,
        id: Id,
        fence: OptFence = None,
        assignee: Annotated[m.Agent | None, Field(description="hand it to this agent")] = None,
    ) -> Annotated[CallToolResult, m.TaskResult]:
        """Give a task you hold back to the board (pending), or hand it to a named agent."""
        return await bridge.answer(methods.release(id, fence=fence, assignee=assignee), ctx)

    @server.tool(annotations=RETRY_SAFE)
    async def complete_task(
        ctx: Context,
        *,
        id: Id,
        fence: OptFence = None,
        result: m.Text | None = None,
        then_post: Annotated[
            m.FollowUp | None, Field(description="posted in the same step, e.g. the ack")
        ] = None,
    ) -> Annotated[CallToolResult, m.CompleteResult]:
        """Mark a task you hold done; then_post announces it (kind ack, state done, tagged
        re:<id>) atomically, as `coord done --ack` does."""
        try:
            follow_up = await bridge.then_post(id, then_post.params() if then_post else None, ctx)
            call = methods.complete(id, fence=fence, result=result, then_post=follow_up)
        except CoordError as exc:
            return results.refusal(exc)
        return await bridge.answer(call, ctx)

    @server.tool(annotations=DESTRUCTIVE)
    async def fail_task(
        ctx: Context,
        *,
        id: Id,
        fence: OptFence = None,
        reason: m.Text | None = None,
        retry: bool | None = None,
    ) -> Annotated[CallToolResult, m.TaskResult]:
        """Give up on a task you hold: failed, or back to pending for someone else (retry)."""
        return await bridge.answer(methods.fail(id, fence=fence, reason=reason, retry=retry), ctx)

    @server.tool(annotations=DESTRUCTIVE)
    async def cancel_task(
        ctx: Context,
        *,
        id: Id,
        reason: m.Text | None = None,
    ) -> Annotated[CallToolResult, m.TaskResult]:
        """Withdraw a task nobody should do any more (pending or claimed)."""
        return await bridge.answer(methods.cancel(id, reason=reason), ctx)

    @server.tool(annotations=WRITES)
    async def reopen_task(ctx: Context, *, id: Id) -> Annotated[CallToolResult, m.TaskResult]:
        """Put a done, failed or cancelled task back on the board."""
        return await bridge.answer(methods.reopen(id), ctx)

    @server.tool(annotations=WRITES)
    async def assign_task(
        ctx: Context,
        *,
        id: Id,
        assignee: Annotated[m.Agent | None, Field(description="the agent, or null to clear")],
    ) -> Annotated[CallToolResult, m.TaskResult]:
        """Hand a pending task to one named agent: only it may claim the task."""
        return await bridge.answer(methods.assign(id, assignee), ctx)

    @server.tool(annotations=RETRY_SAFE)
    async def heartbeat(
        ctx: Context, lease_s: OptLease = None
    ) -> Annotated[CallToolResult, m.HeartbeatResult]:
        """Renew every lease and reservation you hold; call it every few minutes on long work."""
        return await bridge.answer(methods.heartbeat(lease_s=lease_s), ctx)


def _waiting_tools(server: MCPServer, bridge: Bridge) -> None:
    @server.tool(annotations=READ_ONLY)
    async def wait_for_task(
        ctx: Context,
        *,
        kind: m.Kind | None = None,
        state: m.States | None = None,
        tag: m.Tag | None = None,
        title_contains: m.Title | None = None,
        assignee: m.Agent | None = None,
        ready: bool | None = None,
        after_seq: m.Seq | None = None,
        timeout_s: Annotated[float, m.field(bounds.TIMEOUT_S, le=MAX_WAIT_S)] = MAX_WAIT_S,
    ) -> Annotated[CallToolResult, m.WaitResult]:
        """Block until a task on this board matches (at most 50 s). On timeout task is null:
        call again with after_seq = the seq returned, and nothing is missed."""
        deadline = trio.current_time() + timeout_s
        seq = after_seq
        while True:
            left = max(0.0, deadline - trio.current_time())
            chunk = min(left, PROGRESS_EVERY_S)
            call = methods.wait(
                timeout_s=chunk,
                kind=kind,
                state=state,
                tag=tag,
                title_contains=title_contains,
                assignee=assignee,
                ready=ready,
                after_seq=seq,
            )
            answered = await bridge.answer(call, ctx)
            done = answered.is_error or (answered.structured_content or {}).get("task")
            if done or left <= chunk:
                return answered
            # Chained on the seq it returned: edge-triggered from here, so no gap.
            seq = int((answered.structured_content or {})["seq"])
            elapsed = timeout_s - (left - chunk)
            await ctx.report_progress(elapsed, timeout_s, "still waiting for a matching task")


async def _board_paths(bridge: Bridge, paths: list[str]) -> list[str]:
    """Absolute paths in any worktree of the project, relative to their worktree (git runs:
    in a thread)."""
    if not any(os.path.isabs(p) for p in paths):
        return paths
    project = bridge.project.value
    return await trio.to_thread.run_sync(lambda: [relative_to_board(p, project) for p in paths])


def _reservation_tools(server: MCPServer, bridge: Bridge) -> None:
    @server.tool(annotations=WRITES)
    async def reserve_paths(
        ctx: Context,
        *,
        patterns: m.Patterns,
        exclusive: bool | None = None,
        ttl_s: m.TtlSeconds | None = None,
        reason: m.Reason | None = None,
        task_id: Annotated[int, m.field(bounds.TASK_ID, "end with this claim")] | None = None,
        wait_s: Annotated[float, m.field(bounds.WAIT_S, le=MAX_WAIT_S)] | None = None,
    ) -> Annotated[CallToolResult, m.ReservationsResult]:
        """Reserve files before editing them, all or nothing (e.g. ["src/auth/**"]); refused
        with who holds what in the way. Bind to a task you hold with task_id."""
        call = methods.reserve(
            await _board_paths(bridge, patterns),
            exclusive=exclusive,
            ttl_s=ttl_s,
            reason=reason,
            task_id=task_id,
            wait_s=wait_s,
        )
        return await bridge.answer(call, ctx)

    @server.tool(annotations=RETRY_SAFE)
    async def release_paths(
        ctx: Context,
        *,
        patterns: m.Patterns | None = None,
        ids: m.ReservationIds | None = None,
    ) -> Annotated[CallToolResult, m.ReleasedResult]:
        """Release your reservations here: these patterns, these ids, or (neither) all."""
        return await bridge.answer(methods.unreserve(patterns, ids=ids), ctx)

    @server.tool(annotations=READ_ONLY)
    async def check_paths(
        ctx: Context,
        *,
        paths: m.CheckPaths,
    ) -> Annotated[CallToolResult, m.CheckResult]:
        """Before editing: other agents' live reservations covering these paths (relative to
        the repository root, or absolute inside it)."""
        return await bridge.answer(methods.check_paths(await _board_paths(bridge, paths)), ctx)

    @server.tool(annotations=READ_ONLY)
    async def list_reservations(
        ctx: Context, mine: bool = False
    ) -> Annotated[CallToolResult, m.ReservationsResult]:
        """The live reservations on this board (only yours with mine)."""
        agent = bridge.agent(ctx).value if mine else None
        return await bridge.answer(methods.reservations(agent=agent), ctx)

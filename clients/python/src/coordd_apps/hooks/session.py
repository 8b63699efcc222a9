"""Session start's tab record, and session end: give back what the tab held.

The context a session starts with is `hooks/context.py`'s; this module is what
session end needs, so that hook loads neither the summary nor autostart.
"""

from __future__ import annotations

import contextlib
import os
import time

import msgspec

from coordd_apps.hooks.payload import HookInput
from coordd_client import tabs
from coordd_client.client import Client
from coordd_wire import wire
from coordd_wire.errors import Conflict, CoordError, LeaseLost, MethodNotFound
from coordd_wire.method_table import call

#: Seconds session end may spend: Claude Code gives SessionEnd hooks 1.5 s in all.
SESSION_END_TIMEOUT_S = 1.0


#: `SessionEnd` reasons after which the host process goes on as the same tab.
TAB_CONTINUES = frozenset({"clear"})
#: Cursor's `sessionEnd` reason when the window (the agent) goes (documented formats).
CURSOR_WINDOW_CLOSED = "window_close"


def register_tab(given: HookInput) -> list[tabs.Tab]:
    """Record this tab's name for its other surfaces (its MCP server, its shell), and
    return the tabs whose host process is gone that recording prunes (their agents
    are reported ended once the board is reached: `report_ended`).

    Cursor windows are named from their folder on every surface, so they need
    no record; nor does a name pinned by `--agent` or `$COORD_AGENT`.
    """
    if given.host == "cursor" or given.agent.source in ("--agent", "$COORD_AGENT"):
        return []
    gone = tabs.ended()
    session = given.raw.get("session_id")
    tabs.register(given.agent.value, given.host, session if isinstance(session, str) else "")
    return gone


def report_ended(socket: os.PathLike[str] | str, agent: str, gone: list[tabs.Tab]) -> None:
    """Tell the board that `gone`'s agents ended (best effort: the session goes on)."""
    if not gone:
        return
    from coordd_client.tab_ends import report_ended as report

    with contextlib.suppress(CoordError), Client(socket, timeout_s=SESSION_END_TIMEOUT_S) as client:
        report(client, agent, gone)


def tab_ends(given: HookInput) -> bool:
    """Whether this session end ends the tab (and so gives back what it held).

    Claude Code ends the session on `/clear` and starts the next one in the
    same process: that is the same tab and agent, which keeps its claims. A
    Cursor window is one agent for all its chats: a chat's end is not the
    window's, only `window_close` is.
    """
    if given.host == "cursor":
        return given.raw.get("reason") == CURSOR_WINDOW_CLOSED
    if given.raw.get("reason") in TAB_CONTINUES:
        return False
    tabs.forget()
    return True


class _Leases(msgspec.Struct, frozen=True):
    leases: list[wire.SlotLease]


class _Released(msgspec.Struct, frozen=True):
    released: int


class Ended(msgspec.Struct, frozen=True):
    """What session end gave back."""

    claims: int = 0
    reservations: int = 0
    #: Pending tasks of the project that no longer wait for the ended agent.
    unassigned: int = 0
    #: Slot and port leases (issue 35), in any project.
    slots: int = 0


def end_session(socket: os.PathLike[str] | str, agent: str, project: str) -> Ended:
    """Give back everything `agent` held, then tell the board it ended (`agent.end`:
    a hand-over to it is refused from now on), within `SESSION_END_TIMEOUT_S` in all.

    Every claim, reservation and slot or port lease (in any project), then the assignment of
    every pending task of `project` assigned to it: `claim_next` skips an
    assigned task for everyone else, so work handed to an ended tab would
    otherwise wait for it forever. Each is cleared with `task.assign` to
    null, so the task's history says who let it go. A task it held claimed
    and assigned is released first, and so ends pending and unassigned.
    """
    deadline = time.monotonic() + SESSION_END_TIMEOUT_S
    claims = reservations = unassigned = slots = 0
    with Client(socket, timeout_s=SESSION_END_TIMEOUT_S) as client:

        def in_time() -> bool:
            """Whether budget is left; the next call may take only what is."""
            client.timeout_s = deadline - time.monotonic()
            return client.timeout_s > 0

        held = client.list_tasks(state="claimed", claimed_by=agent, limit=1000).tasks
        for task in held:
            if not in_time():
                break
            try:
                client.release(task.id, agent, fence=task.fence)
                claims += 1
            except LeaseLost:
                continue  # it lapsed or was taken meanwhile: not ours to give back
        if in_time():
            mine = client.reservations(agent=agent).reservations
            for of_project in sorted({r.project for r in mine}):
                if not in_time():
                    break
                reservations += client.unreserve(agent=agent, project=of_project).released
        if in_time():
            # Issue 35's leases, asked for through the method table without their builders
            # and result types (the raw page is all session end reads).
            try:
                listed = call("slot.list", {"agent": agent}).as_type(_Leases)
                leases = client.send(listed, timeout_s=client.timeout_s).leases
            except MethodNotFound:  # a daemon without slots
                leases = []
            for of_project in sorted({lease.project for lease in leases}):
                if not in_time():
                    break
                params = {"agent": agent, "project": of_project}
                released = call("slot.release", params).as_type(_Released)
                slots += client.send(released, timeout_s=client.timeout_s).released
        if in_time():
            waiting = client.list_tasks(
                project=project, state="pending", assignee=agent, limit=1000
            ).tasks
            for task in waiting:
                if not in_time():
                    break
                try:
                    client.assign(task.id, None, agent=agent)
                    unassigned += 1
                except Conflict:
                    continue  # claimed meanwhile: its holder has it now
        if in_time():
            # Last: each call above is a sign of life, which clears a reported end.
            with contextlib.suppress(MethodNotFound):  # a daemon without `agent_ended`
                client.end_agent(agent=agent)
    return Ended(claims, reservations, unassigned, slots)

"""The board in a few lines for a context window: `coord prime` and the SessionStart
hook print exactly this (the MCP `board` tool is its JSON sibling, `mcp_bridge/board.py`).

Bounded whatever the board's size, by `SUMMARY_CHARS` (characters, so about a
quarter as many tokens): each section shows at most a handful of rows, titles,
names and patterns are cut to one short line, and what was left out is counted.
Ranked, so that when the bound cuts, it cuts the least useful lines: the
caller's own claims and reservations first (what it must finish or give back),
then what was handed to it, then ready work by priority, then who else holds
what (presence.py: this project's agents, seen lately or holding something),
then the latest acks. A 100,000-task board costs a tab what a 10-task one does.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec

from coordd_apps.wording import render
from coordd_apps.wording.render_edits import other_line
from coordd_client import methods, methods_edits, presence
from coordd_client.client import Client
from coordd_client.gather import gather, value
from coordd_client.human import is_person
from coordd_client.paging import TASK_PAGE, all_tasks, first_tasks, more_ordered
from coordd_client.text import clean
from coordd_wire.errors import InvalidParams, MethodNotFound
from coordd_wire.wire import Event, ListResult, Reservation, Task
from coordd_wire.wire_edits import FileEdit

#: Rows per section.
MY_CLAIMS_SHOWN = 10
MY_RESERVATIONS_SHOWN = 5
READY_SHOWN = 8
ACKS_SHOWN = 5
#: Other agents' edits of the caller's files in other worktrees (issue 33).
EDITS_SHOWN = 3
AGENTS_SHOWN = 8
#: Characters of a title (and of a reservation's pattern) shown.
TITLE_CHARS = 80
#: Characters of an agent's name, a kind or the project shown: the daemon bounds none
#: of them tightly, and one long name must not cost every tab its context.
NAME_CHARS = 64
PROJECT_CHARS = 120
#: The whole summary, hint included, in characters (about 900 tokens at 4 a token).
SUMMARY_CHARS = 3600
#: Pages of `TASK_PAGE` tasks read per state: a bigger board is summarized from its
#: first 10,000 pending and claimed tasks (by id), and says so, as the MCP board does.
#: Reading 100,000 took a session start 25 s on a loaded machine (bench/context.py).
SCAN_PAGES = 10
#: The project's live claims read to say who else holds what: the most urgent, the rest
#: counted and said (a board whose open work grows costs each tab start no more).
CLAIMS_READ = 200
#: Recent events read to find the latest acks and who acted in the project lately.
ACK_LOOKBACK_EVENTS = 500


class BoardSummary(msgspec.Struct, frozen=True):
    text: str
    my_claims: list[Task]
    ready: list[Task]
    #: Pending tasks assigned to the agent (shown, so a wake-up need not repeat them).
    assigned: list[Task]


def cut(text: str, limit: int) -> str:
    """`text` made safe to print (`clean`) and at most `limit` characters."""
    text = clean(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _title(task: Task) -> str:
    return cut(task.title, TITLE_CHARS)


#: How to act on the board, by who reads the summary: a shell's `coord` runs as the tab
#: in Claude Code and Codex (the tab registry), but as its terminal in Cursor, whose
#: window is an agent only to its MCP server and hooks.
SHELL_HINT = (
    "Claim with `coord next` or `coord claim ID`; finish with `coord done ID`;"
    " `coord wait` instead of polling."
)
TOOLS_HINT = (
    "Claim with the coord tools (claim_next, claim_task), finish with complete_task;"
    " in a terminal, `coord` is another agent unless you pass `--agent {agent}`."
)
#: The last line when the bound cut the summary short.
CUT_LINE = "  ... the board goes on (coord prime --json, coord ls)"


def summarize(
    client: Client, agent: str, project: str, *, shell_is_the_agent: bool = True
) -> BoardSummary:
    now = datetime.now(UTC)
    # The reads that do not depend on each other, in one round trip (issue 46: a
    # session-start hook waited on seven in turn). The task reads ask the daemon for
    # what is shown and the counts of the rest (1.2 section 6c); a daemon older than
    # that refuses the params, and is read the old way.
    answers = gather(
        client,
        [
            *_task_calls(agent, project),
            methods.reservations(project=project),
            methods_edits.recent_edits(project=project, agent=agent, limit=EDITS_SHOWN + 1),
            methods.server_info(),
            methods.agents(),
        ],
    )
    reserved_now, edits, info, agents = answers[-4:]
    unread_claims = 0
    if isinstance(answers[0], InvalidParams):
        tasks = _read_paging(client, agent, project)
    else:
        tasks = _read_urgent(client, answers[:4], agent, project)
        claims_page = value(answers[1])
        unread_claims = (claims_page.counts or {}).get("claimed", 0) - len(claims_page.tasks)
    mine, claimed, ready, ready_total, ready_read, for_me, pending = tasks
    reserved: list[Reservation] = value(reserved_now).reservations
    # Other agents' edits: none from a daemon without the feature (1.2 section 11).
    elsewhere: list[FileEdit] = [] if isinstance(edits, MethodNotFound) else value(edits).edits
    recent = _recent_events(client, project, value(info).last_seq)
    holding: dict[str, list[int]] = defaultdict(list)
    for task in claimed:
        if task.claimed_by and task.claimed_by != agent:
            holding[task.claimed_by].append(task.id)
    # This project's agents at work, not every name the daemon knows (presence.py).
    seen = presence.scoped(
        value(agents).agents,
        now,
        holders=set(holding) | {r.agent for r in reserved},
        involved=presence.involved([*claimed, *pending], recent),
    )
    names = sorted({a.agent for a in seen if a.agent != agent} | set(holding))
    # The person is not another agent (issue 47 item 1): said apart, and only when
    # they hold something a tab could run into.
    others = [name for name in names if not is_person(name)]
    people = [name for name in names if is_person(name)]
    acks = [e.task for e in recent if e.task is not None and e.type == "task.posted"]
    acks = [task for task in acks if task.kind == "ack"]
    header = (
        f"coordd board: project {cut(project, PROJECT_CHARS)}; you are {cut(agent, NAME_CHARS)}"
    )
    sections = [
        _claims(mine),
        _reservations([r for r in reserved if r.agent == agent]),
        _elsewhere(elsewhere, project),
        _assigned(for_me),
        _ready(ready, ready_total, ready_read),
        _others(others, holding, reserved, unread_claims),
        people_lines(people, holding, reserved),
        _acks(acks[::-1][:ACKS_SHOWN]),
    ]
    hint = SHELL_HINT if shell_is_the_agent else TOOLS_HINT.format(agent=cut(agent, NAME_CHARS))
    text = fit([header], sections, hint, SUMMARY_CHARS)
    return BoardSummary(text, mine, ready, for_me)


#: What the board's tasks are read into: the caller's claims, the project's claims, the
#: ready tasks shown (most urgent first) and how many there are, how many pending tasks
#: were read when not all were (else None), what is assigned to the caller, and the
#: pending tasks read (whose posters and assignees count as involved in the project).
TaskReads = tuple[list[Task], list[Task], list[Task], int, int | None, list[Task], list[Task]]


def _task_calls(agent: str, project: str) -> list[methods.Call[ListResult]]:
    """Section 6c's reads: the caller's claims, the project's, the most urgent ready
    tasks the caller may claim with their count, and the pending tasks assigned to it."""
    urgent: dict[str, Any] = {"project": project, "order": "urgent"}
    return [
        methods.list_tasks(**urgent, limit=TASK_PAGE, state="claimed", claimed_by=agent),
        methods.list_tasks(**urgent, limit=CLAIMS_READ, state="claimed", counts=True),
        methods.list_tasks(**urgent, limit=READY_SHOWN, ready=True, open_to=agent, counts=True),
        methods.list_tasks(**urgent, limit=TASK_PAGE, state="pending", assignee=agent),
    ]


def _read_urgent(client: Client, pages: list[Any], agent: str, project: str) -> TaskReads:
    urgent = {"project": project, "order": "urgent"}
    mine_page, claimed_page, ready_page, for_me_page = (value(page) for page in pages)
    big = TASK_PAGE * SCAN_PAGES
    mine = _by_id(more_ordered(client, mine_page, big, state="claimed", claimed_by=agent,
                               **urgent))  # fmt: skip
    claimed = _by_id(claimed_page.tasks)
    for_me = _by_id(more_ordered(client, for_me_page, big, state="pending", assignee=agent,
                                 **urgent))  # fmt: skip
    ready: list[Task] = ready_page.tasks
    total = (ready_page.counts or {}).get("pending", len(ready))
    return mine, claimed, ready, total, None, for_me, [*ready, *for_me]


def _by_id(tasks: list[Task]) -> list[Task]:
    return sorted(tasks, key=lambda t: t.id)


def _read_paging(client: Client, agent: str, project: str) -> TaskReads:
    """A daemon without section 6c: every open task of the project, page by page (at
    most `SCAN_PAGES` pages per state), ranked here."""
    mine_asked = {"project": project, "state": "claimed", "claimed_by": agent}
    claimed_asked = {"project": project, "state": "claimed"}
    pending_asked = {"project": project, "state": "pending"}
    mine = all_tasks(client, **mine_asked)
    claimed, _ = first_tasks(client, SCAN_PAGES, **claimed_asked)
    pending, cut_short = first_tasks(client, SCAN_PAGES, **pending_asked)
    # Ready: pending with every dependency done (1.1), and not handed to someone else.
    ready = sorted(
        (t for t in pending if t.ready and t.assignee in (None, agent)),
        key=lambda t: (-t.priority, t.id),
    )
    for_me = [t for t in pending if t.assignee == agent]
    if cut_short:  # what was handed to the caller is few: ask for all of it
        for_me = all_tasks(client, project=project, state="pending", assignee=agent)
    read = len(pending) if cut_short else None
    return mine, claimed, ready, len(ready), read, for_me, pending


def fit(head: list[str], sections: Sequence[list[str]], tail: str, limit: int) -> str:
    """`head`, then `sections`' lines in rank order while they fit in `limit` characters
    (newlines counted) with `tail` after them; a cut ends with `CUT_LINE`.

    `head` and `tail` are short and always kept (the caller's name, how to act)."""
    ranked = [line for section in sections for line in section]
    used = sum(len(line) + 1 for line in head) + len(tail)
    if used + sum(len(line) + 1 for line in ranked) <= limit:
        return "\n".join([*head, *ranked, tail])
    lines = list(head)
    used += len(CUT_LINE) + 1
    for line in ranked:
        if used + len(line) + 1 > limit:
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join([*lines, CUT_LINE, tail])


def _more(lines: list[str], left_out: int, where: str) -> None:
    if left_out > 0:
        lines.append(f"  ... {left_out} more ({where})")


def _claims(mine: list[Task]) -> list[str]:
    lines = [f"Your claims ({len(mine)}):" if mine else "Your claims: none"]
    for task in mine[:MY_CLAIMS_SHOWN]:
        lease = "lease ends " + render.relative(task.lease_expires_at)
        lines.append(
            f"  #{task.id} [{cut(task.kind, NAME_CHARS)}] {_title(task)}"
            f" (fence {task.fence}, {lease})"
        )
    _more(lines, len(mine) - MY_CLAIMS_SHOWN, "coord ls --mine")
    return lines


def _reservations(mine: list[Reservation]) -> list[str]:
    """The caller's own reservations: what other tabs are kept from, until it lets go."""
    if not mine:
        return []
    lines = [f"Your reservations ({len(mine)}):"]
    for r in mine[:MY_RESERVATIONS_SHOWN]:
        kind = "exclusive" if r.exclusive else "shared"
        task = f", for #{r.task_id}" if r.task_id is not None else ""
        until = f"ending {render.relative(r.expires_at)}"
        lines.append(f"  {cut(r.pattern, TITLE_CHARS)} ({kind}, {until}{task})")
    _more(lines, len(mine) - MY_RESERVATIONS_SHOWN, "coord reservations --mine")
    return lines


def _elsewhere(edits: list[FileEdit], project: str) -> list[str]:
    """Merge conflicts in the making: your files, edited in another worktree too."""
    if not edits:
        return []
    lines = ["Also edited in other worktrees (merge conflicts in the making):"]
    lines += ["  " + cut(other_line(e, project)[7:], TITLE_CHARS * 2) for e in edits[:EDITS_SHOWN]]
    _more(lines, len(edits) - EDITS_SHOWN, "coord prime --json")
    return lines


def _assigned(for_me: list[Task]) -> list[str]:
    if not for_me:
        return []
    lines = [f"Assigned to you ({len(for_me)}):"]
    for task in for_me[:MY_CLAIMS_SHOWN]:
        why = "" if task.ready else " blocked by " + ",".join(f"#{i}" for i in task.blocked_by[:5])
        lines.append(
            f"  #{task.id} p{task.priority} [{cut(task.kind, NAME_CHARS)}] {_title(task)}{why}"
        )
    _more(lines, len(for_me) - MY_CLAIMS_SHOWN, "coord ls --mine")
    return lines


def _ready(ready: list[Task], total: int, read: int | None) -> list[str]:
    """`ready`: the most urgent first, at least `READY_SHOWN` of the `total`; `read`: how
    many pending tasks were read, when that was not all of them."""
    if read is not None:
        head = f"Ready to claim (at least {total:,}; of the first {read:,} pending read,"
        lines = [head + " most urgent first):"]
    else:
        lines = [f"Ready to claim ({total}, most urgent first):" if total else "Ready: none"]
    for task in ready[:READY_SHOWN]:
        lines.append(f"  #{task.id} p{task.priority} [{cut(task.kind, NAME_CHARS)}] {_title(task)}")
    _more(lines, total - READY_SHOWN, "coord ls")
    return lines


def _others(
    others: list[str], holding: dict[str, list[int]], reserved: list[Reservation], unread: int
) -> list[str]:
    """Who else is at work here, and what each holds: claims, and how many reservations
    (with edits reserving files on their own, most agents at work hold some). `unread`:
    the project's claims beyond the `CLAIMS_READ` most urgent, said rather than read."""
    if not others:
        return []
    patterns: dict[str, int] = {}
    for r in reserved:
        patterns[r.agent] = patterns.get(r.agent, 0) + 1
    lines = ["Other agents:"]
    for name in others[:AGENTS_SHOWN]:
        held = _held(name, holding, patterns)
        what = f"holds {'; '.join(held)}" if held else "holds nothing"
        lines.append(f"  {cut(name, NAME_CHARS)}: {what}")
    _more(lines, len(others) - AGENTS_SHOWN, "coord agents")
    if unread > 0:
        lines.append(f"  ... and {unread} more claims, not read here (coord ls --state claimed)")
    return lines


def people_lines(
    people: list[str], holding: dict[str, list[int]], reserved: list[Reservation]
) -> list[str]:
    """The person at this machine, when they hold claims or reservations: not another
    agent to coordinate with, but someone whose files a tab must not take (the
    session-start context and the MCP `board`'s `the_human` say it alike)."""
    patterns: dict[str, int] = {}
    for r in reserved:
        patterns[r.agent] = patterns.get(r.agent, 0) + 1
    lines = []
    for name in people[:AGENTS_SHOWN]:
        held = _held(name, holding, patterns)
        if held:
            lines.append(f"The human ({cut(name, NAME_CHARS)}) holds {'; '.join(held)}")
    return lines


def _held(name: str, holding: dict[str, list[int]], patterns: dict[str, int]) -> list[str]:
    """What one name holds, in a few words: its claims' ids and its reservation count."""
    ids = holding.get(name, [])
    held = [", ".join(f"#{i}" for i in ids[:5]) + (" ..." if len(ids) > 5 else "")] if ids else []
    if patterns.get(name):
        count = patterns[name]
        held.append(f"{count} reservation{'s' if count != 1 else ''}")
    return held


def _acks(acks: list[Task]) -> list[str]:
    if not acks:
        return []
    return ["Recent acks:"] + [
        f"  #{t.id} {_title(t)} (by {cut(t.created_by or '-', NAME_CHARS)})" for t in acks
    ]


def _recent_events(client: Client, project: str, last: int) -> list[Event]:
    """`project`'s events among the log's last `ACK_LOOKBACK_EVENTS` (up to `last`),
    oldest first."""
    return client.events_since(
        after_seq=max(0, last - ACK_LOOKBACK_EVENTS),
        project=project,
        limit=ACK_LOOKBACK_EVENTS,
    ).events

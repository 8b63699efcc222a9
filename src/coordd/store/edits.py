"""Recorded edits and reads, and the pre-edit verdict (docs/PROTOCOL-1.2.md section 11).

`guard` is the one round trip a pre-edit hook makes: the reservation check
of section 10, the stale-write verdict, the automatic reservation of what is
about to change, and other live agents' edits of the same paths elsewhere.
It runs in the writer (it may reserve), in one transaction, so two tabs
editing the same unreserved file at once are ordered: the first reserves
it, the second finds it reserved and is denied, naming the first.

Nothing here reads or writes on the claim path: the only task row read is
the caller's own live claims (to bind a reservation to its one task), in
this command's own transaction, never in a claim's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import msgspec

from coordd.clock import format_time, parse_time
from coordd.pattern_verdicts import Verdicts
from coordd.store import reservation_rows, reservations
from coordd.store.sql import Db
from coordd.store.transaction import Txn, encoder, in_list
from coordd_wire import params as P
from coordd_wire import params_edits as E
from coordd_wire.method_table import OPT_IN_EVENT_TYPES
from coordd_wire.patterns import MAX_PATTERN_CHARS
from coordd_wire.wire import LIVE_HORIZON

#: The `reason` of a reservation taken on first edit: how renewals find them, and how a
#: board tells them from those an agent asked for (which are never touched here).
AUTO_REASON = "auto: reserved on first edit (coordd)"
#: Rows of `file_edits` and `file_seen` older than this go (retention, `purge_old`).
KEEP_S = 24 * 3600.0
#: An agent seen this recently is live (the wire's rule, as every surface says).
LIVE_S = LIVE_HORIZON.total_seconds()
#: The event a recorded edit appends; delivered only where `types` names it
#: (`method_table.OPT_IN_EVENT_TYPES`).
FILE_EDITED = "file.edited"

_WILDCARD = re.compile(r"([\\*?\[])")


assert FILE_EDITED in OPT_IN_EVENT_TYPES


class _FileEdited(msgspec.Struct, kw_only=True):
    seq: int
    at: str
    type: str
    task_id: None
    agent: str
    project: str
    worktree: str
    paths: list[str]


def literal_pattern(path: str) -> str | None:
    """The pattern that covers `path` and what lies under it, with its wildcards
    escaped; None when no pattern may be that long."""
    text = _WILDCARD.sub(r"\\\1", path)
    if text.startswith("!"):
        text = "\\" + text
    return text if len(text) <= MAX_PATTERN_CHARS else None


# --- the pre-edit verdict -------------------------------------------------------


def match_for_guard(conn: Db, now: str, p: E.GuardParams) -> Verdicts:
    """The guard's matching, on a reader and off the writer (issue 44): the reservation
    check and, for each path, whether anything of another agent overlaps it, recorded
    for `guard` to look up (`coordd.pattern_verdicts`). Reads only."""
    verdicts = Verdicts()
    relative = p.relative
    reservations.check(conn, now, P.CheckParams(project=p.project, paths=relative), verdicts)
    if p.auto_reserve is not False:
        above = reservations.others_above(conn, now, p.project, p.agent)
        for path in dict.fromkeys(relative):
            _in_the_way(conn, now, p, path, verdicts=verdicts, above=above)
    verdicts.freeze()
    return verdicts


def guard(tx: Txn, p: E.GuardParams, verdicts: Verdicts | None = None) -> dict[str, Any]:
    """Deny (reserved by another, or stale), else reserve what is unreserved and allow.

    `verdicts`: what `match_for_guard` matched on a reader just before; every row is
    still read here, and only what changed since is matched here."""
    verdicts = Verdicts() if verdicts is None else verdicts
    now = tx.now_text
    relative = p.relative
    check = P.CheckParams(project=p.project, paths=relative)
    covering = reservations.check(tx.conn, now, check, verdicts)["conflicts"]
    mine = {c["path"] for c in covering if c["reservation"]["agent"] == p.agent}
    held = [
        {"path": p.paths[relative.index(c["path"])], "reservation": c["reservation"]}
        for c in covering
        if c["reservation"]["agent"] != p.agent and c["reservation"]["exclusive"]
    ]
    stale, unrecorded = ([], []) if p.hashes is None else _freshness(tx.conn, p, relative)
    tx.touch_agent(p.agent)
    if held or stale:
        return _verdict(False, conflicts=held, stale=stale)
    for path, current in unrecorded:  # warned once: this content is the baseline now
        _upsert_seen(tx, p, path, current)
    renewed = _renew_auto(tx, p.agent, p.project)
    granted: list[dict[str, Any]] = []
    task_id = None
    if p.auto_reserve is not False:
        wanted = [path for path in dict.fromkeys(relative) if path not in mine]
        task_id, granted = _reserve(tx, p, wanted, verdicts)
    return _verdict(
        True,
        unrecorded=[path for path, _ in unrecorded],
        reserved=granted,
        task_id=task_id,
        renewed=renewed,
        others=_others(tx.conn, now, p, relative),
    )


def _verdict(allowed: bool, **found: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "allowed": allowed,
        "conflicts": [],
        "stale": [],
        "unrecorded": [],
        "reserved": [],
        "task_id": None,
        "renewed": 0,
        "others": [],
    }
    answer.update(found)
    return answer


def _freshness(
    conn: Db, p: E.GuardParams | E.RecordReadParams, relative: list[str]
) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """(stale, unrecorded) for the paths whose content is not what the agent last saw.

    Stale: another agent's recorded edit in this worktree since the agent's own
    read or write. Unrecorded: changed, and nobody recorded it (a human, a
    formatter). A path the agent never read or wrote has nothing to be stale against.
    """
    assert p.hashes is not None
    stale: list[dict[str, Any]] = []
    unrecorded: list[tuple[str, str]] = []
    args: dict[str, Any] = {"agent": p.agent, "project": p.project, "worktree": p.worktree}
    for given, path, current in zip(p.paths, relative, p.hashes, strict=True):
        args["path"] = path
        seen = conn.execute(
            "SELECT at, hash FROM file_seen WHERE agent = :agent AND project = :project"
            " AND worktree = :worktree AND path = :path",
            args,
        ).fetchall()
        if not seen or seen[0][1] == current:
            continue
        args["since"] = seen[0][0]
        edit = conn.execute(
            "SELECT agent, at FROM file_edits WHERE project = :project AND path = :path"
            " AND worktree = :worktree AND agent <> :agent AND at >= :since"
            " ORDER BY at DESC LIMIT 1",
            args,
        ).fetchall()
        if edit:
            stale.append({"path": given, "agent": edit[0][0], "at": edit[0][1]})
        elif (path, current) not in unrecorded:
            unrecorded.append((path, current))
    return stale, unrecorded


def _in_the_way(
    conn: Db,
    now: str,
    p: E.GuardParams,
    path: str,
    *,
    verdicts: Verdicts,
    above: reservation_rows.ByPrefix,
) -> bool:
    """Whether another agent's live reservation (shared or not) overlaps `path`'s
    automatic reservation; True too when no pattern can name it (nothing to reserve)."""
    text = literal_pattern(path)
    if text is None:
        return True
    return reservations.in_the_way(
        conn,
        now,
        p.project,
        p.agent,
        pattern=verdicts.parsed(text),
        verdicts=verdicts,
        above=above,
    )


def _reserve(
    tx: Txn, p: E.GuardParams, wanted: Sequence[str], verdicts: Verdicts
) -> tuple[int | None, list[dict[str, Any]]]:
    """Reserve each of `wanted` that nobody else holds in any way, all in one acquire.

    A path another agent holds shared (or under a pattern that overlaps without
    covering it) is edited without an automatic reservation: the holder said
    others may work there. Bound to the agent's one claim in the project, if it
    holds exactly one; else to the session, for `ttl_s`, renewed by each edit.
    """
    above = reservations.others_above(tx.conn, tx.now_text, p.project, p.agent)
    patterns = [
        text
        for path in wanted
        if not _in_the_way(tx.conn, tx.now_text, p, path, verdicts=verdicts, above=above)
        and (text := literal_pattern(path)) is not None
    ]
    if not patterns:
        return None, []
    claims = tx.conn.execute(
        "SELECT id FROM tasks INDEXED BY tasks_lease WHERE state = 'claimed'"
        " AND lease_expires_at > :now AND claimed_by = :agent AND project = :project LIMIT 2",
        {"now": tx.now_text, "agent": p.agent, "project": p.project},
    ).fetchall()
    task_id = int(claims[0][0]) if len(claims) == 1 else None
    acquire = P.AcquireParams(
        agent=p.agent,
        project=p.project,
        patterns=patterns,
        exclusive=True,
        ttl_s=E.DEFAULT_AUTO_TTL_S if p.ttl_s is None else p.ttl_s,
        reason=AUTO_REASON,
        task_id=task_id,
    )
    return task_id, reservations.acquire(tx, acquire, verdicts)["reservations"]


def _renew_auto(tx: Txn, agent: str, project: str) -> int:
    """Each edit renews the agent's live automatic reservations in the project."""
    live = tx.conn.execute(
        "SELECT r.id, r.ttl_s FROM reservations AS r INDEXED BY reservations_agent"
        " WHERE r.agent = :agent AND r.project = :project AND r.reason = :auto"
        f" AND {reservation_rows.LIVE}",
        {"agent": agent, "project": project, "auto": AUTO_REASON, "now": tx.now_text},
    ).fetchall()
    tx.conn.executemany(
        "UPDATE reservations SET expires_at = ? WHERE id = ?",
        [(tx.lease_until(ttl_s), reservation_id) for reservation_id, ttl_s in live],
    )
    return len(live)


def _others(conn: Db, now: str, p: E.GuardParams, relative: list[str]) -> list[dict[str, Any]]:
    """Other live agents' recorded edits of these paths in other worktrees, newest first."""
    args: dict[str, Any] = {
        "project": p.project,
        "agent": p.agent,
        "worktree": p.worktree,
        "live": _ago(now, LIVE_S),
        "since": _ago(now, KEEP_S),
    }
    rows = conn.execute(
        "SELECT e.path, e.worktree, e.agent, e.at FROM file_edits AS e"
        " JOIN agents AS a ON a.agent = e.agent"
        f" WHERE e.project = :project AND e.path IN {in_list('path', relative, args)}"
        " AND e.worktree <> :worktree AND e.agent <> :agent AND e.at > :since"
        " AND a.last_seen > :live ORDER BY e.at DESC, e.path LIMIT 20",
        args,
    ).fetchall()
    return [_edit(row) for row in rows]


def _edit(row: Sequence[Any]) -> dict[str, Any]:
    path, worktree, agent, at = row
    return {"path": path, "worktree": worktree, "agent": agent, "at": at}


def _ago(now: str, seconds: float) -> str:
    return format_time(parse_time(now) - timedelta(seconds=seconds))


# --- recording ------------------------------------------------------------------


def record_edit(tx: Txn, p: E.RecordEditParams) -> dict[str, Any]:
    """The edit as the post-edit hook saw it: the agent's baseline, and the edit others see."""
    relative = p.relative
    for path, after in zip(relative, p.hashes, strict=True):
        tx.conn.execute(
            "INSERT INTO file_edits (project, path, worktree, agent, at, hash)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (project, path, worktree, agent)"
            " DO UPDATE SET at = excluded.at, hash = excluded.hash",
            (p.project, path, p.worktree, p.agent, tx.now_text, after),
        )
        _upsert_seen(tx, p, path, after)
    tx.touch_agent(p.agent)
    _emit_edited(tx, p, list(dict.fromkeys(relative)))
    return {"recorded": len(relative)}


def record_read(tx: Txn, p: E.RecordReadParams) -> dict[str, Any]:
    """What the agent read: its new baseline for the stale-write verdict.

    `changed`: the paths another agent's recorded edit changed since the agent's own
    last read or write, as `file.guard` names them stale (issue 47 item 5: Claude Code
    refuses such a write itself, before any hook, without saying who; the re-read it
    asks for is where the model learns who)."""
    relative = p.relative
    changed, _ = _freshness(tx.conn, p, relative)
    for path, content in zip(relative, p.hashes, strict=True):
        _upsert_seen(tx, p, path, content)
    tx.touch_agent(p.agent)
    return {"recorded": len(p.paths), "changed": changed}


def _upsert_seen(tx: Txn, p: E._FileParams, path: str, content: str) -> None:
    tx.conn.execute(
        "INSERT INTO file_seen (agent, project, worktree, path, at, hash)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (agent, project, worktree, path)"
        " DO UPDATE SET at = excluded.at, hash = excluded.hash",
        (p.agent, p.project, p.worktree, path, tx.now_text, content),
    )


def _emit_edited(tx: Txn, p: E._FileParams, paths: list[str]) -> None:
    """Append `file.edited`: an event with no task (`task_id` null, no `task`)."""
    tx.emit_untasked(
        FILE_EDITED,
        p.project,
        lambda seq: encoder.encode(
            _FileEdited(
                seq=seq, at=tx.now_text, type=FILE_EDITED, task_id=None, agent=p.agent,
                project=p.project, worktree=p.worktree, paths=paths,
            )
        ),
    )  # fmt: skip


# --- reads and retention --------------------------------------------------------


def recent(conn: Db, now: str, p: E.RecentParams) -> dict[str, Any]:
    """Recorded edits by live agents, newest first.

    With `agent`: other agents' edits, in other worktrees, of paths `agent` edited
    too (a merge conflict in the making). Without: every live agent's edits.
    """
    limit = E.DEFAULT_RECENT_LIMIT if p.limit is None else p.limit
    args: dict[str, Any] = {
        "project": p.project,
        "since": _ago(now, KEEP_S),
        "live": _ago(now, LIVE_S),
        "limit": limit,
    }
    mine = ""
    if p.agent is not None:
        args["agent"] = p.agent
        mine = (
            " AND e.agent <> :agent AND EXISTS (SELECT 1 FROM file_edits AS m"
            " WHERE m.project = e.project AND m.path = e.path AND m.agent = :agent"
            " AND m.worktree <> e.worktree AND m.at > :since)"
        )
    rows = conn.execute(
        "SELECT e.path, e.worktree, e.agent, e.at FROM file_edits AS e"
        " JOIN agents AS a ON a.agent = e.agent"
        f" WHERE e.project = :project AND e.at > :since AND a.last_seen > :live{mine}"
        " ORDER BY e.at DESC, e.path LIMIT :limit",
        args,
    ).fetchall()
    return {"edits": [_edit(row) for row in rows]}


def purge_old(tx: Txn) -> int:
    """Retention: records older than `KEEP_S` go (a day of edits is what the guard uses)."""
    cutoff = format_time(tx.now - timedelta(seconds=KEEP_S))
    edits = tx.conn.execute("DELETE FROM file_edits WHERE at < ?", (cutoff,)).rowcount
    seen = tx.conn.execute("DELETE FROM file_seen WHERE at < ?", (cutoff,)).rowcount
    return int(edits) + int(seen)

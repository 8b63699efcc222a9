"""Release requests (1.2 section 12): ask the holder of a reservation or a claim, and
its answer: approve, deny or narrow.

An approve or narrow hands over inside the holder's one write transaction:
the holder's reservations in the way end and the requester's are granted
(`reservations.acquire`, all or nothing), or the claim is released to the
requester and claimed by it (`holding.release_task`, then
`claims.claim_task`). No other command can run in between, so a third agent
racing for the same paths or task finds them held, before and after. If any
part fails (the holder no longer holds the task, a third agent holds an
overlapping pattern), the whole answer is refused and nothing changes.

A hand-over to a requester whose end was reported (`agent_ends`) is refused:
it would hold the files or the task for a tab that is gone. The requester's
last-seen stays as it was: being handed something is not being seen.
"""

from __future__ import annotations

import msgspec

from coordd.store import agent_ends, claims, holding, reservations
from coordd.store.messages import by_key, insert_message, require_message
from coordd.store.reservation_rows import LIVE
from coordd.store.transaction import Txn, require_row
from coordd_wire import bounds
from coordd_wire import params as P
from coordd_wire import params_messages as T
from coordd_wire.errors import Conflict, InvalidParams, LeaseLost, NotFound
from coordd_wire.patterns import overlap, parse
from coordd_wire.wire import Reservation, Task
from coordd_wire.wire_messages import AnswerResult, RequestResult


def _shorten(text: str) -> str:
    limit = bounds.MESSAGE_BODY.max_length or len(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def request_release(tx: Txn, p: T.RequestReleaseParams) -> RequestResult:
    """`request.release`: one request, to the one agent holding what is asked for."""
    repeat = by_key(tx, p.project, p.idempotency_key)
    if repeat is not None:
        return RequestResult(request=repeat, created=False)
    if p.task_id is not None:
        holder = _claim_holder(tx, p)
        what = f"task #{p.task_id}"
        patterns_json = None
    else:
        assert p.patterns is not None
        holder = _pattern_holder(tx, p, p.patterns)
        what = ", ".join(dict.fromkeys(p.patterns))
        patterns_json = msgspec.json.encode(list(dict.fromkeys(p.patterns))).decode()
    ttl_s = T.DEFAULT_REQUEST_TTL_S if p.ttl_s is None else p.ttl_s
    expires_at = tx.lease_until(ttl_s)
    body = p.body or f"{p.agent} asks you to release {what}"
    request = insert_message(
        tx, project=p.project, sender=p.agent, kind="request", audience="agent",
        recipients=[holder], body=_shorten(body), to=holder, task_id=p.task_id,
        key=p.idempotency_key,
        request={"patterns": patterns_json, "claim_id": p.task_id, "expires_at": expires_at},
    )  # fmt: skip
    return RequestResult(request=request, created=True)


def _claim_holder(tx: Txn, p: T.RequestReleaseParams) -> str:
    assert p.task_id is not None
    row = require_row(tx.conn, p.task_id)
    held = row.state == "claimed" and (row.lease_expires_at or "") > tx.now_text
    if not held or row.claimed_by is None:
        raise Conflict(
            f"task {p.task_id} is {row.state if row.state != 'claimed' else 'not held'}:"
            " nobody holds it to ask; claim it instead",
            task=row.raw,
        )
    if row.claimed_by == p.agent:
        raise Conflict(f"you ({p.agent}) hold task {p.task_id} already", task=row.raw)
    if p.to is not None and p.to != row.claimed_by:
        raise NotFound(f"task {p.task_id} is held by {row.claimed_by}, not by {p.to}")
    return row.claimed_by


def _pattern_holder(tx: Txn, p: T.RequestReleaseParams, texts: list[str]) -> str:
    patterns = [parse(text) for text in dict.fromkeys(texts)]
    conflicts = reservations.find_conflicts(
        tx.conn, tx.now_text, p.project, p.agent, patterns=patterns, exclusive=True
    )
    holders = list(dict.fromkeys(c.reservation.agent for c in conflicts))
    if p.to is not None:
        holders = [h for h in holders if h == p.to]
    if not holders:
        whom = f"{p.to} holds" if p.to is not None else "no other agent holds"
        raise NotFound(f"{whom} a live reservation in the way of {', '.join(texts)}")
    if len(holders) > 1:
        raise InvalidParams(
            f"{', '.join(texts)} is held by {' and '.join(holders)}: ask one at a time,"
            " naming it in `to` - at `$.to`",
            field="to",
        )
    holder: str = holders[0]
    return holder


def answer(tx: Txn, p: T.AnswerParams) -> AnswerResult:
    """`request.answer`: the holder decides; an approve or narrow hands over now."""
    request = require_message(tx.conn, p.id, tx.now_text)
    state = request.request
    if state is None:
        raise NotFound(f"message {p.id} is a {request.kind}, not a release request", id=p.id)
    if request.to != p.agent:
        raise LeaseLost(f"request #{p.id} is addressed to {request.to}, not to you ({p.agent})")
    if state.status != "open":
        raise Conflict(f"request #{p.id} is {state.status} already; nothing to answer")
    requester, project = request.sender, request.project
    task: Task | None = None
    granted: list[Reservation] = []
    released: list[str] = []
    if p.decision != "deny":
        what = f"task #{state.task_id}" if state.task_id is not None else "a reservation"
        agent_ends.refuse_ended(tx.conn, requester, what)
        # The requester is handed what it asked for; that is not a sign of its life.
        tx.absent.add(requester)
        if state.task_id is not None:
            if p.decision == "narrow":
                raise InvalidParams(
                    "a claim is handed over whole: approve or deny it - at `$.decision`",
                    field="decision",
                )
            task = _hand_over_claim(tx, state.task_id, p.agent, requester)
        else:
            wanted = state.patterns if p.decision == "approve" else p.patterns
            assert wanted is not None
            granted, released = _hand_over_patterns(
                tx, project, p.agent, requester, wanted=wanted, request_id=p.id
            )
    if granted:
        # The holder's reservations in the way ended: acquires waiting on what is
        # left of them may go (the requester's grant is already in place).
        tx.freed_projects.add(project)
    tx.absent.discard(requester)
    status = {"approve": "approved", "deny": "denied", "narrow": "narrowed"}[p.decision]
    given = [r.pattern for r in granted]
    what = f"task #{state.task_id}" if task is not None else ", ".join(given)
    # A deny says what stays where, as an approve says what moved: the requester's
    # tab reads this line (issue 47: every approval, and its refusal, says what), and
    # the human's reason follows in their own words.
    one = state.task_id is not None or len(state.patterns or ()) == 1
    kept = (
        f"task #{state.task_id}" if state.task_id is not None else ", ".join(state.patterns or ())
    )
    text = {
        "approve": f"approved: {what} is yours now",
        "narrow": f"narrowed: you have {what}",
        "deny": f"denied: {kept} {'stays' if one else 'stay'} with {p.agent}",
    }[p.decision] + (f" ({p.reason})" if p.reason else "")
    reply = insert_message(
        tx, project=project, sender=p.agent, kind="answer", audience="agent",
        recipients=[requester], body=_shorten(text), to=requester, task_id=state.task_id,
        reply_to=p.id,
    )  # fmt: skip
    tx.conn.execute(
        "UPDATE messages SET status = ?, granted = ?, reason = ?, answer_id = ? WHERE id = ?",
        (
            status,
            msgspec.json.encode(given).decode() if given else None,
            p.reason,
            reply.id,
            p.id,
        ),
    )
    return AnswerResult(
        request=require_message(tx.conn, p.id, tx.now_text),
        answer=reply,
        reservations=granted,
        released=released,
        task=task,
    )


def _hand_over_claim(tx: Txn, task_id: int, holder: str, requester: str) -> Task:
    """Release the holder's claim to the requester and claim it for it, one step."""
    holding.release_task(tx, P.ReleaseParams(id=task_id, agent=holder, assignee=requester))
    claimed = claims.claim_task(tx, P.ClaimParams(id=task_id, agent=requester))
    if not claimed.won:
        raise Conflict(f"task {task_id} cannot be claimed by {requester} now", task=claimed.task)
    return claimed.task


def _hand_over_patterns(
    tx: Txn, project: str, holder: str, requester: str, *, wanted: list[str], request_id: int
) -> tuple[list[Reservation], list[str]]:
    """End the holder's live reservations that overlap `wanted`; grant `wanted` to the
    requester (all or nothing: a third agent's reservation in the way refuses it).

    Returns the requester's new reservations and the holder's patterns that ended. A
    pattern cannot be cut in two (`lib/**` less `lib/x.py` is no pattern), so a
    broader one ends whole: the answer names it, and the holder re-reserves what it
    still needs (docs/MESSAGES.md says so)."""
    patterns = [parse(text) for text in dict.fromkeys(wanted)]
    args = {"project": project, "agent": holder, "now": tx.now_text}
    held = tx.conn.execute(
        f"SELECT r.id, r.pattern FROM reservations AS r WHERE r.project = :project"
        f" AND r.agent = :agent AND {LIVE}",
        args,
    ).fetchall()
    ending = [(rid, text) for rid, text in held if any(overlap(parse(text), m) for m in patterns)]
    if ending:
        tx.conn.executemany("DELETE FROM reservations WHERE id = ?", [(rid,) for rid, _ in ending])
        tx.freed_projects.add(project)
    result = reservations.acquire(
        tx,
        P.AcquireParams(
            agent=requester,
            project=project,
            patterns=[pattern.text for pattern in patterns],
            reason=f"handed over by {holder} (request #{request_id})",
        ),
    )
    return result.reservations, [text for _, text in ending]

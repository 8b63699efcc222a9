"""The human's actions, each done as `human-<user>` through the trio client, each
confirmed first: a form posts once and gets a confirmation page that posts the same
fields again with `confirmed=yes`; only that second post acts.

Approval gates: a task assigned to the human is "waiting for you". Approve claims
it as the human and completes it (its dependents unblock); reject claims it and
fails it with the reason given (its dependents stay blocked: a failed dependency
blocks until someone reopens it, PROTOCOL.md section 9).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from coordd_apps import approvals
from coordd_apps.approvals import Facts
from coordd_apps.web.daemon import connected
from coordd_apps.wording import render
from coordd_apps.wording.advice import plural
from coordd_client import human
from coordd_client.aio import AsyncClient
from coordd_wire import bounds
from coordd_wire.errors import CoordError
from coordd_wire.wire import Task
from coordd_wire.wire_messages import Decision, Message

#: A form bigger than this is refused before it is read whole (a title, a body, ids).
MAX_FORM_BYTES = 128 * 1024


class Refused(Exception):
    """A bad form: shown to the human as it is, with status 400."""


@dataclass(frozen=True)
class Site:
    """What every action needs: where the daemon is, which board, and who the human is."""

    socket: Path
    project: str | None
    human: str
    #: The board's row cap: the newest tasks that pass its filter (`coord web --rows`).
    rows: int


@dataclass(frozen=True)
class Outcome:
    """What an action did, in words, and the page to go back to."""

    text: str
    back: str


Form = dict[str, str]
Act = Callable[[Site, AsyncClient, Form, str], Awaitable[Outcome]]


def _task_id(text: str) -> int:
    try:
        value = int(text.lstrip("#"))
    except ValueError:
        raise Refused(f"not a task id: {text!r}") from None
    if value < 1:
        raise Refused(f"not a task id: {text!r}")
    return value


def _message_id(text: str) -> int:
    try:
        value = int(text.lstrip("#"))
    except ValueError:
        raise Refused(f"not a message id: {text!r}") from None
    if value < 1:
        raise Refused(f"not a message id: {text!r}")
    return value


def _body(form: Form) -> str:
    body = form.get("body", "").strip()
    if not body or len(body) > 8192:
        raise Refused("a message of 1..8192 characters is needed")
    return body


def _ids(text: str) -> list[int]:
    return [_task_id(part) for part in text.replace(",", " ").split()]


def _said(form: Form, name: str) -> str:
    """A field the human wrote, in quotation marks (not a Python repr's quotes and escapes)."""
    return '"' + form.get(name, "") + '"'


def question(verb: str, form: Form, target: str) -> str:
    """What the confirmation page asks, in words (quoted text in quotation marks, never
    a Python repr); an approval's is `confirmation`'s, which reads what it approves."""
    if verb == "post":
        to = f", assigned to {form.get('assignee')}" if form.get("assignee") else ""
        return f"Post {_said(form, 'title')}{to}?"
    if verb == "assign":
        return f"Assign #{target} to {form.get('assignee') or 'nobody'}?"
    if verb == "release-agent":
        return f"Release everything {target} holds (claims, reservations, assignments)?"
    if verb == "reject":
        return f"Reject #{target} (fail it) because {_said(form, 'reason')}?"
    if verb == "send":
        to = form.get("to", "").strip() or (
            f"task #{form['task'].strip()}'s thread" if form.get("task", "").strip() else "everyone"
        )
        return f"Send {form.get('kind') or 'message'} to {to}: {_said(form, 'body')}?"
    if verb == "reply":
        return f"Reply to #{target}: {_said(form, 'body')}?"
    if verb == "answer":
        decision = form.get("decision", "")
        said = form.get("patterns") if decision == "narrow" else form.get("reason")
        return f"{decision.capitalize()} release request #{target}" + (
            f" ({said})?" if said else "?"
        )
    if verb == "ack":
        return f"Mark every message up to #{form.get('up_to', '')} read?"
    return f"{verb.capitalize()} #{target}?"


async def confirmation(site: Site, verb: str, form: Form, target: str) -> tuple[str, Facts]:
    """The confirmation's question and the facts it shows: for an approval gate (approve,
    reject) and a release request (answer), what is signed, read from the daemon now;
    for anything else the form's own words (`question`). Approving a request whose
    requester's tab has ended is refused here, before the person confirms."""
    if verb not in ("approve", "reject", "answer"):
        return question(verb, form, target), []
    try:
        async with connected(site.socket) as client:
            if verb == "answer":
                asked = (await client.get_message(_message_id(target))).message
                if form.get("decision") in ("approve", "narrow"):
                    gone = approvals.gone_refusal(asked, (await client.agents()).agents)
                    if gone is not None:
                        raise Refused(gone)
                patterns = form.get("patterns", "").split()
                said = approvals.request_question(
                    form["decision"], asked, patterns, form.get("reason", "").strip()
                )
                return said, approvals.request_facts(asked, await _ends(client, form, asked))
            task = (await client.get(_task_id(target))).task
    except CoordError as exc:
        raise Refused(exc.message) from None
    said = approvals.gate_question(verb, task, form.get("reason", "").strip())
    return said, approvals.gate_facts(task)


async def _ends(client: AsyncClient, form: Form, asked: Message) -> list[str]:
    """What else approving (or narrowing) `asked` ends of its holder's reservations."""
    if form.get("decision") not in ("approve", "narrow") or asked.request is None:
        return []
    held = await client.reservations(project=asked.project, agent=asked.request.holder)
    handed = form.get("patterns", "").split() if form.get("decision") == "narrow" else []
    return approvals.ends_whole(asked, held.reservations, handed)


def check(verb: str, form: Form, target: str) -> None:
    """Refuse a form that cannot work before asking the human to confirm it."""
    if verb == "post":
        title = form.get("title", "").strip()
        if not title or len(title) > (bounds.TITLE.max_length or 300):
            raise Refused("a title of 1..300 characters is needed")
        try:
            int(form.get("priority") or 0)
        except ValueError:
            raise Refused("priority must be a whole number") from None
        _ids(form.get("after", ""))
    elif verb == "release-agent":
        if not target:
            raise Refused("which agent?")
    elif verb in ("send", "reply"):
        _body(form)
        if verb == "send" and form.get("kind", "message") not in ("", "message", "question"):
            raise Refused("a message is of kind message or question")
        if form.get("task", "").strip():
            _task_id(form["task"].strip())
        if verb == "reply":
            _message_id(target)
    elif verb == "answer":
        _message_id(target)
        decision = form.get("decision")
        if decision not in ("approve", "deny", "narrow"):
            raise Refused("answer approve, deny or narrow")
        if decision == "narrow" and not form.get("patterns", "").split():
            raise Refused("narrow names the patterns to hand over")
        if len(form.get("reason", "")) > 1024:
            raise Refused("a reason of at most 1024 characters")
    elif verb == "ack":
        _message_id(form.get("up_to", ""))
    else:
        _task_id(target)
    if verb == "reject" and not form.get("reason", "").strip():
        raise Refused("a reason is needed to reject")


async def _post(site: Site, client: AsyncClient, form: Form, target: str) -> Outcome:
    result = await client.post(
        form["title"].strip(),
        body=form.get("body") or None,
        kind=form.get("kind") or None,
        priority=int(form.get("priority") or 0),
        assignee=form.get("assignee", "").strip() or None,
        depends_on=_ids(form.get("after", "")) or None,
        agent=site.human,
        project=site.project or "default",
    )
    return Outcome(f"posted {render.one_line(result.task)}", f"/task/{result.task.id}")


async def _assign(site: Site, client: AsyncClient, form: Form, target: str) -> Outcome:
    task_id = _task_id(target)
    assignee = form.get("assignee", "").strip() or None
    task = (await client.assign(task_id, assignee, agent=site.human)).task
    return Outcome(f"assigned #{task.id} to {task.assignee or 'nobody'}", f"/task/{task_id}")


async def _cancel(site: Site, client: AsyncClient, form: Form, target: str) -> Outcome:
    task = (await client.cancel(_task_id(target), agent=site.human)).task
    return Outcome(f"cancelled #{task.id}", f"/task/{task.id}")


async def _reopen(site: Site, client: AsyncClient, form: Form, target: str) -> Outcome:
    task = (await client.reopen(_task_id(target), agent=site.human)).task
    return Outcome(f"reopened #{task.id}", f"/task/{task.id}")


async def _release_agent(site: Site, client: AsyncClient, form: Form, target: str) -> Outcome:
    done = await client.release_agent(
        target, agent=site.human, project=site.project, reason="released from coord web"
    )
    return Outcome(
        f"released {target}: {plural(done.claims, 'claim')},"
        f" {plural(done.reservations, 'reservation')},"
        f" {plural(done.unassigned, 'assignment')}, {plural(done.slots, 'slot')}",
        "/agents",
    )


async def _decide(site: Site, client: AsyncClient, task_id: int) -> int:
    """Claim the gate as the human (held already counts: a second click), its fence."""
    claim = await client.claim(task_id, site.human)
    if not claim.won:
        raise Refused(f"#{task_id} is held by {claim.task.claimed_by or 'someone'} now")
    return claim.task.fence


async def _approve(site: Site, client: AsyncClient, form: Form, target: str) -> Outcome:
    task_id = _task_id(target)
    fence = await _decide(site, client, task_id)
    task = (await client.get(task_id)).task
    result = approvals.gate_result(site.human, task)
    await client.complete(task_id, site.human, fence=fence, result=result)
    await _tell_asker(site, client, task, "approved")
    return Outcome(f"approved #{task_id}", f"/task/{task_id}")


async def _reject(site: Site, client: AsyncClient, form: Form, target: str) -> Outcome:
    task_id = _task_id(target)
    fence = await _decide(site, client, task_id)
    reason = form["reason"].strip()
    task = (await client.fail(task_id, site.human, fence=fence, reason=reason)).task
    await _tell_asker(site, client, task, "rejected", reason)
    return Outcome(f"rejected #{task_id}", f"/task/{task_id}")


async def _tell_asker(
    site: Site, client: AsyncClient, task: Task, decision: str, reason: str = ""
) -> None:
    """Message the gate's asker with the decision and the reason, on the gate's thread:
    the task's new state alone reaches only a tab that waits on it, a message reaches
    (and wakes) any tab. Best effort: the decision is made whatever becomes of this."""
    asker = task.created_by
    if not asker or asker == site.human:
        return
    with contextlib.suppress(CoordError):
        await client.send_message(
            approvals.gate_answer(decision, task, reason),
            to=asker,
            task_id=task.id,
            agent=site.human,
            project=task.project,
        )


async def _send(site: Site, client: AsyncClient, form: Form, target: str) -> Outcome:
    task = form.get("task", "").strip()
    sent = await client.send_message(
        _body(form),
        to=form.get("to", "").strip() or None,
        task_id=_task_id(task) if task else None,
        kind="question" if form.get("kind") == "question" else "message",
        agent=site.human,
        project=site.project or "default",
    )
    return Outcome(f"sent #{sent.message.id}", f"/task/{task}" if task else "/messages")


async def _reply(site: Site, client: AsyncClient, form: Form, target: str) -> Outcome:
    asked = (await client.get_message(_message_id(target))).message
    sent = await client.send_message(
        _body(form), reply_to=asked.id, agent=site.human, project=asked.project
    )
    return Outcome(f"replied #{sent.message.id}", "/messages")


async def _answer(site: Site, client: AsyncClient, form: Form, target: str) -> Outcome:
    decisions: dict[str, Decision] = {"approve": "approve", "deny": "deny", "narrow": "narrow"}
    decision = decisions[form["decision"]]
    patterns = form.get("patterns", "").split() if decision == "narrow" else None
    asked = (await client.get_message(_message_id(target))).message
    done = await client.answer_request(
        asked.id,
        decision,
        patterns=patterns,
        reason=approvals.answer_reason(decision, asked, form.get("reason", "").strip()),
        agent=human.answering_as(asked.to, site.human),  # a former name's request: as it
    )
    return Outcome(f"answered #{done.request.id}: {decision}", "/messages")


async def _ack(site: Site, client: AsyncClient, form: Form, target: str) -> Outcome:
    up_to = _message_id(form["up_to"])
    known = [a.agent for a in (await client.agents()).agents]
    for name in human.inbox_names(site.human, known):  # the human's and its former names
        await client.ack_messages(up_to, agent=name)
    return Outcome("read", "/messages")


ACTS: dict[str, Act] = {
    "post": _post,
    "assign": _assign,
    "cancel": _cancel,
    "reopen": _reopen,
    "release-agent": _release_agent,
    "approve": _approve,
    "reject": _reject,
    "send": _send,
    "reply": _reply,
    "answer": _answer,
    "ack": _ack,
}


async def perform(site: Site, verb: str, form: Form, target: str) -> Outcome:
    """Do it; a daemon's refusal (a terminal state, a lost claim) becomes `Refused`."""
    try:
        async with connected(site.socket) as client:
            return await ACTS[verb](site, client, form, target)
    except CoordError as exc:
        raise Refused(exc.message) from None

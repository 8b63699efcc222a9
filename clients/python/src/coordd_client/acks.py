"""What an acknowledgement is, declared once for every surface (issue 47 item 2).

An ack announces finished work ("parser fix landed"): nobody is to claim it, so it
is posted `kind: "ack"` and `state: "done"`, the protocol's state "for an
announcement, such as an ack, that nobody need claim" (PROTOCOL.md section 5).
Posted pending, an ack is work to the daemon: `task.claim_next` hands it out and
every board lists it as ready, which is what the MCP `complete_task` did with its
`then_post` until this rule was shared. The CLI (`coord post -k ack`, `coord done
--ack`), the MCP tools (`post_task`, `complete_task`'s `then_post`), `coord web`'s
post form and both Python clients go through `announced`, by way of the builders
(`methods.post`, `methods.complete`); the TypeScript client has the same rule in
`clients/ts/src/acks.ts`, from the constants `scripts/ts_wire.py` writes from these.

The daemon keeps `kind` opaque, as the protocol has it (a 1.1 client may post an ack
pending, and it is then work like any other): the rule is the clients'.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from coordd_wire import bounds
from coordd_wire.errors import InvalidParams
from coordd_wire.wire import PostState, Task

#: The kind of an acknowledgement, by the protocol's convention (section 4).
ACK_KIND: Final = "ack"
#: The kinds that announce rather than ask: never posted as work.
ANNOUNCEMENT_KINDS: Final = frozenset({ACK_KIND})
#: The state an announcement is posted in.
ANNOUNCED: Final[PostState] = "done"
#: An ack names the task it announces by this tag and the task's id (`re:42`), so
#: `coord wait -k ack -t re:42` (or `task.wait` with that tag) finds it.
LINK_TAG_PREFIX: Final = "re:"


def is_announcement(kind: str | None) -> bool:
    """Whether a post of `kind` announces (the protocol's default kind, `task`, asks)."""
    return kind in ANNOUNCEMENT_KINDS


def announced(params: Mapping[str, Any]) -> dict[str, Any]:
    """`task.post` params (or a `then_post`) as they are sent: an announcement kind
    with no state is posted done; one asked for `pending` is refused here, before
    the daemon, which would take it as work."""
    posted = dict(params)
    if not is_announcement(posted.get("kind")):
        return posted
    state = posted.get("state")
    if state not in (None, ANNOUNCED):
        raise InvalidParams(
            f"a {posted['kind']} announces and is never work: it is posted {ANNOUNCED}, not"
            f" {state}; post work with another kind (task, bug, handoff, question)",
            field="state",
        )
    posted["state"] = ANNOUNCED
    return posted


def link_tag(task_id: int) -> str:
    """The tag that ties an ack to the task it announces."""
    return f"{LINK_TAG_PREFIX}{task_id}"


def ack_tags(task: Task, extra: Iterable[str] = ()) -> list[str]:
    """An ack's tags: `re:<id>` first, then the caller's, then the task's own, each
    once, within the protocol's 16."""
    seen: dict[str, None] = dict.fromkeys([link_tag(task.id), *extra, *task.tags])
    return list(seen)[: bounds.TAGS.max_length]


def follow_up(task: Task, params: Mapping[str, Any]) -> dict[str, Any]:
    """The `then_post` of completing `task`: an ack unless another kind is named.

    An ack goes to the task's project, tagged as `ack_tags` says, and done; another
    kind (a follow-up task for someone else) is posted as given. The CLI's `--ack`
    and the MCP `complete_task` both build theirs here, so they post the same ack.
    """
    posted = dict(params)
    posted.setdefault("kind", ACK_KIND)
    if not is_announcement(posted["kind"]):
        return posted
    posted.setdefault("project", task.project)
    posted["tags"] = ack_tags(task, posted.get("tags") or ())
    return announced(posted)


def completion_repeated(
    recorded_result: str | None,
    recorded_ack: str | None,
    *,
    asked_result: str | None,
    asked_ack: str | None,
) -> bool:
    """Whether a completion's answer is an earlier completion's, not this call's.

    A completion is idempotent (PROTOCOL.md section 5): completing a task its agent
    completed already returns that first completion's result and ack, and records
    nothing. The wire has no flag for it, so a repeat shows only where what this call
    asked for (a result, an ack's title) differs from what came back; a repeat that
    asked for the same is indistinguishable, and amounts to the first. Every surface
    that words a completion (`coord done`, the MCP `complete_task`) asks this.
    """
    return (asked_result is not None and recorded_result != asked_result) or (
        asked_ack is not None and recorded_ack != asked_ack
    )


def asked_ack_title(follow_up: Mapping[str, Any] | None) -> str | None:
    """The ack title a completion's `then_post` asks for, as `completion_repeated` compares
    it; None when the title can tell nothing: no follow-up, or one with an idempotency
    key, which answers the post made before under that key (PROTOCOL.md section 6)
    whatever its title, so only the result can then show a repeat."""
    if not follow_up or follow_up.get("idempotency_key"):
        return None
    title = follow_up.get("title")
    return title if isinstance(title, str) else None

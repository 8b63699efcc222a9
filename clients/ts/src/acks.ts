/**
 * What an acknowledgement is (issue 47 item 2): the rule of `coordd_client/acks.py`, from
 * the constants `scripts/ts_wire.py` writes into wire.ts, so this client posts the ack the
 * CLI's `coord done --ack` and the MCP `complete_task` post (pinned by
 * tests/system/test_ack_parity.py).
 *
 * An ack announces finished work: nobody is to claim it, so it is posted `kind: "ack"`,
 * `state: "done"`. Posted pending, the daemon takes it for work (`task.claim_next` hands
 * it out): the protocol keeps `kind` opaque, so the rule is the clients'. `post` and
 * `complete` (its `then_post`) apply `announced` (`withAnnouncements`); `ackOf` builds a
 * task's ack.
 */

import { InvalidParams } from "./errors.js";
import type { PostParams, Task } from "./types.js";
import { ACK_KIND, ANNOUNCED, ANNOUNCEMENT_KINDS, BOUNDS, LINK_TAG_PREFIX } from "./wire.js";

/** Whether a post of `kind` announces (the protocol's default kind, `task`, asks). */
export function isAnnouncement(kind: string | null | undefined): boolean {
  return (ANNOUNCEMENT_KINDS as readonly string[]).includes(kind ?? "");
}

/**
 * `task.post` params (or a `then_post`) as they are sent: an announcement kind with no
 * state is posted done; one asked for `pending` is refused (InvalidParams, `data.field`
 * "state") before the daemon, which would take it as work.
 */
export function announced<P extends PostParams>(p: P): P {
  if (!isAnnouncement(p.kind)) return p;
  if (p.state !== undefined && p.state !== null && p.state !== ANNOUNCED) {
    throw new InvalidParams(
      `a ${p.kind} announces and is never work: it is posted ${ANNOUNCED}, not ${p.state};` +
        " post work with another kind (task, bug, handoff, question)",
      -32602,
      { kind: "invalid_params", field: "state" },
    );
  }
  return { ...p, state: ANNOUNCED };
}

/** The params of `task.post`, or of `task.complete` with its `then_post`, as they are sent. */
export function withAnnouncements(method: "task.post" | "task.complete", p: object): object {
  if (method === "task.post") return announced(p as PostParams);
  const complete = p as { then_post?: PostParams | null };
  // null is "no follow-up", as omitted (the daemon reads it so): nothing to announce.
  return complete.then_post == null ? p : { ...p, then_post: announced(complete.then_post) };
}

/** The tag that ties an ack to the task it announces (`re:42`). */
export function linkTag(taskId: number): string {
  return `${LINK_TAG_PREFIX}${taskId}`;
}

/** An ack's tags: `re:<id>` first, then the caller's, then the task's own, each once, within 16. */
export function ackTags(task: Pick<Task, "id" | "tags">, extra: readonly string[] = []): string[] {
  return [...new Set([linkTag(task.id), ...extra, ...task.tags])].slice(0, BOUNDS.tags.maxLength);
}

/**
 * The `then_post` of completing `task`: its ack, titled `title` (kind ack, done, tagged
 * `re:<id>` and the task's tags, in the task's project); `more` adds a body, tags or an
 * agent. The same ack as `coord done ID --ack TITLE`.
 */
export function ackOf(task: Pick<Task, "id" | "tags" | "project">, title: string, more: Omit<PostParams, "title"> = {}): PostParams {
  return announced({
    project: task.project,
    ...more,
    title,
    kind: ACK_KIND,
    tags: ackTags(task, more.tags ?? []),
  });
}

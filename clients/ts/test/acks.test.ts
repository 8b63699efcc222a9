/** Acknowledgements are never work (issue 47 item 2): the TS client's side of the rule. */

import assert from "node:assert/strict";
import { test } from "node:test";

import { ackOf, ackTags, announced, CoorddClient, InvalidParams } from "../src/index.js";
import { shareBoard } from "./daemon.js";

const board = shareBoard();
const P = "/ts-acks";

test("an ack is posted done, by ackOf or by its kind alone, and claim_next hands none out", async () => {
  const c: CoorddClient = board.client;
  const task = (await c.post({ title: "fix the parser", project: P, tags: ["parser"] })).task;
  const won = await c.claim({ id: task.id, agent: "ts" });
  const done = await c.complete({ id: task.id, agent: "ts", fence: won.task.fence, then_post: ackOf(won.task, "parser fixed") });
  assert.deepEqual(
    [done.posted?.kind, done.posted?.state, done.posted?.project, done.posted?.tags],
    ["ack", "done", P, [`re:${task.id}`, "parser"]],
  );
  const byKind = await c.post({ title: "heads up", kind: "ack", project: P });
  assert.equal(byKind.task.state, "done");
  const plain = await c.complete({
    id: (await c.claim({ id: (await c.post({ title: "b", project: P })).task.id, agent: "ts" })).task.id,
    agent: "ts", then_post: { title: "b done", kind: "ack", project: P },
  });
  assert.equal(plain.posted?.state, "done");
  assert.equal((await c.claimNext({ agent: "ts", project: P })).task, null);
  assert.deepEqual((await c.list({ project: P, ready: true })).tasks, []);
});

test("an ack asked for as pending work is refused before the daemon", async () => {
  const refused = await board.client.post({ title: "x", kind: "ack", state: "pending", project: P }).catch((e: unknown) => e);
  assert.ok(refused instanceof InvalidParams && refused.data.field === "state");
  assert.throws(() => announced({ title: "x", kind: "ack", state: "pending" }), InvalidParams);
  assert.deepEqual(announced({ title: "x", kind: "bug" }), { title: "x", kind: "bug" });
});

test("an ack's tags: re:<id> first, each once, at most 16", () => {
  const many = Array.from({ length: 20 }, (_, n) => `t${n}`);
  const tags = ackTags({ id: 7, tags: ["re:7", ...many] }, ["mine", "t0"]);
  assert.deepEqual(tags.slice(0, 3), ["re:7", "mine", "t0"]);
  assert.equal(tags.length, 16);
});

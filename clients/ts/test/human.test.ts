/**
 * One human (issue 47 item 1), the TS client's side: `human` as an assignee or a
 * recipient is this user's `human-<user>`, the name `coord top`, `coord web` and the
 * person's shells act as, so a gate or a question from a TS extension reaches them.
 */

import assert from "node:assert/strict";
import { test } from "node:test";

import { humanAgent, isHuman, resolveHuman } from "../src/index.js";
import { shareBoard } from "./daemon.js";

const board = shareBoard();
const P = "/ts-human";

test("the word human is this user's human-<user>, the Python rule", () => {
  assert.equal(humanAgent({ LOGNAME: "ada", USER: "bob" }), "human-ada");
  assert.equal(humanAgent({ USER: "bob" }), "human-bob");
  assert.ok(isHuman("human-ada") && !isHuman("claude-1"));
  assert.deepEqual(resolveHuman("task.post", { title: "t", assignee: "human" }, { USER: "ada" }), {
    title: "t",
    assignee: "human-ada",
  });
  assert.deepEqual(resolveHuman("task.post", { title: "t", assignee: "humane" }, { USER: "ada" }), {
    title: "t",
    assignee: "humane",
  });
  assert.deepEqual(resolveHuman("task.claim", { id: 1, agent: "human" }), { id: 1, agent: "human" });
});

test("a gate and a question from this client reach the person's one name", async () => {
  const me = humanAgent();
  const gate = await board.client.post({ title: "ship 1.4?", project: P, assignee: "human" });
  assert.equal(gate.task.assignee, me);
  await board.client.sendMessage({ agent: "ts", project: P, to: "human", body: "which table first?", kind: "question" });
  const [batchGate] = await board.client.batch([{ method: "task.post", params: { title: "and 1.5?", project: P, assignee: "human" } }]);
  assert.ok(batchGate !== undefined && "result" in batchGate);
  assert.equal((batchGate.result as { task: { assignee: string } }).task.assignee, me);
  const inbox = await board.client.readMessages({ agent: me });
  assert.deepEqual(inbox.messages.map((m) => [m.sender, m.body]), [["ts", "which table first?"]]);
});

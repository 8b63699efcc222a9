import assert from "node:assert/strict";
import { test } from "node:test";

import { LeaseLost } from "../src/index.js";
import { shareBoard } from "./daemon.js";

// Issue 34 (protocol 1.2 section 12) from the TypeScript client, against a real daemon.
const board = shareBoard();
const P = "/ts-talk";

test("messages are read once and a release request hands the paths over", async () => {
  const info = await board.client.serverInfo();
  assert.ok(info.features.includes("messages") && info.features.includes("release_requests"));
  const sent = await board.client.sendMessage({ agent: "ts-a", project: P, body: "hello", to: "ts-b" });
  assert.deepEqual(sent.recipients, ["ts-b"]);
  const waiting = board.client.waitMessages({ agent: "ts-b", timeout_s: 30 });
  const inbox = await waiting;
  assert.deepEqual(inbox.messages.map((m) => m.body), ["hello"]);
  await board.client.ackMessages({ agent: "ts-b", up_to: inbox.messages.at(-1)?.id ?? 0 });
  assert.deepEqual((await board.client.readMessages({ agent: "ts-b" })).messages, []);
  await board.client.reserve({ agent: "ts-b", project: P, patterns: ["src/**"] });
  const asked = await board.client.requestRelease({ agent: "ts-a", project: P, patterns: ["src/**"] });
  assert.equal(asked.request.request?.holder, "ts-b");
  await assert.rejects(board.client.answerRequest({ agent: "ts-a", id: asked.request.id, decision: "approve" }), LeaseLost);
  const answered = await board.client.answerRequest({ agent: "ts-b", id: asked.request.id, decision: "approve" });
  assert.deepEqual(answered.reservations.map((r) => r.agent), ["ts-a"]);
  assert.equal((await board.client.getMessage(asked.request.id)).message.request?.status, "approved");
});

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { CoorddClient, LeaseLost } from "../src/index.js";
import { Daemon } from "./daemon.js";

// Issue 34 (protocol 1.2 section 12) from the TypeScript client, against a real daemon.
let daemon: Daemon;
let client: CoorddClient;
const P = "/ts-talk";

before(async () => {
  daemon = await new Daemon().start();
  client = await CoorddClient.connect({ socketPath: daemon.socketPath });
});
after(async () => {
  client.close();
  await daemon.destroy();
});

test("messages are read once and a release request hands the paths over", async () => {
  const info = await client.serverInfo();
  assert.ok(info.features.includes("messages") && info.features.includes("release_requests"));
  const sent = await client.sendMessage({ agent: "ts-a", project: P, body: "hello", to: "ts-b" });
  assert.deepEqual(sent.recipients, ["ts-b"]);
  const waiting = client.waitMessages({ agent: "ts-b", timeout_s: 30 });
  const inbox = await waiting;
  assert.deepEqual(inbox.messages.map((m) => m.body), ["hello"]);
  await client.ackMessages({ agent: "ts-b", up_to: inbox.messages.at(-1)?.id ?? 0 });
  assert.deepEqual((await client.readMessages({ agent: "ts-b" })).messages, []);
  await client.reserve({ agent: "ts-b", project: P, patterns: ["src/**"] });
  const asked = await client.requestRelease({ agent: "ts-a", project: P, patterns: ["src/**"] });
  assert.equal(asked.request.request?.holder, "ts-b");
  await assert.rejects(client.answerRequest({ agent: "ts-a", id: asked.request.id, decision: "approve" }), LeaseLost);
  const answered = await client.answerRequest({ agent: "ts-b", id: asked.request.id, decision: "approve" });
  assert.deepEqual(answered.reservations.map((r) => r.agent), ["ts-a"]);
  assert.equal((await client.getMessage(asked.request.id)).message.request?.status, "approved");
});

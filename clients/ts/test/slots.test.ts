import assert from "node:assert/strict";
import { test } from "node:test";

import { Conflict } from "../src/index.js";
import { shareBoard } from "./daemon.js";

const board = shareBoard();
const P = "/ts-slots";

test("slots, ports and the landing queue (issue 35)", async () => {
  const info = await board.client.serverInfo();
  assert.ok(info.features.includes("slots") && info.features.includes("landing_queue"));
  const lock = await board.client.acquireSlot({ agent: "ts", project: P, name: "migrations" });
  assert.equal(lock.lease.fence, lock.lease.id);
  await assert.rejects(board.client.acquireSlot({ agent: "other", project: P, name: "migrations" }), Conflict);
  const port = await board.client.leasePort({ agent: "ts", project: P, name: "web", low: 32000, high: 32001 });
  assert.equal(port.lease.port, 32000);
  assert.equal((await board.client.slots({ project: P })).leases.length, 2);
  assert.equal((await board.client.releaseSlots({ agent: "ts", project: P })).released, 2);
  const queued = await board.client.enqueueLanding({ agent: "ts", project: P, branch: "f1", onto: "main", paths: ["a.ts"] });
  assert.deepEqual(queued.ahead, []);
  const started = await board.client.startLanding({ agent: "ts", project: P, id: queued.landing.id });
  assert.equal(started.landing.state, "landing");
  const done = await board.client.finishLanding({ agent: "ts", project: P, id: queued.landing.id, outcome: "failed", reason: "demo" });
  assert.equal(done.landing.state, "failed");
  assert.deepEqual((await board.client.landings({ project: P })).landings, []);
  const events = await board.client.eventsSince({ project: P, types: ["slot.granted", "land.failed"] });
  assert.deepEqual(events.events.map((e) => [e.type, e.task]), [
    ["slot.granted", null], ["slot.granted", null], ["slot.granted", null], ["land.failed", null],
  ]);
});

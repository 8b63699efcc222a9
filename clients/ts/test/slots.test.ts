import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Conflict, CoorddClient } from "../src/index.js";
import { Daemon } from "./daemon.js";

let daemon: Daemon;
let client: CoorddClient;
const P = "/ts-slots";

before(async () => {
  daemon = await new Daemon().start();
  client = await CoorddClient.connect({ socketPath: daemon.socketPath });
});
after(async () => {
  client.close();
  await daemon.destroy();
});

test("slots, ports and the landing queue (issue 35)", async () => {
  const info = await client.serverInfo();
  assert.ok(info.features.includes("slots") && info.features.includes("landing_queue"));
  const lock = await client.acquireSlot({ agent: "ts", project: P, name: "migrations" });
  assert.equal(lock.lease.fence, lock.lease.id);
  await assert.rejects(client.acquireSlot({ agent: "other", project: P, name: "migrations" }), Conflict);
  const port = await client.leasePort({ agent: "ts", project: P, name: "web", low: 32000, high: 32001 });
  assert.equal(port.lease.port, 32000);
  assert.equal((await client.slots({ project: P })).leases.length, 2);
  assert.equal((await client.releaseSlots({ agent: "ts", project: P })).released, 2);
  const queued = await client.enqueueLanding({ agent: "ts", project: P, branch: "f1", onto: "main", paths: ["a.ts"] });
  assert.deepEqual(queued.ahead, []);
  const started = await client.startLanding({ agent: "ts", project: P, id: queued.landing.id });
  assert.equal(started.landing.state, "landing");
  const done = await client.finishLanding({ agent: "ts", project: P, id: queued.landing.id, outcome: "failed", reason: "demo" });
  assert.equal(done.landing.state, "failed");
  assert.deepEqual((await client.landings({ project: P })).landings, []);
  const events = await client.eventsSince({ project: P, types: ["slot.granted", "land.failed"] });
  assert.deepEqual(events.events.map((e) => [e.type, e.task]), [
    ["slot.granted", null], ["slot.granted", null], ["slot.granted", null], ["land.failed", null],
  ]);
});

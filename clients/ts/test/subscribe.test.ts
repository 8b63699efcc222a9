import assert from "node:assert/strict";
import { test } from "node:test";

import { CoorddClient, subscribe, type Event } from "../src/index.js";
import { Daemon } from "./daemon.js";

async function take(iterator: AsyncIterator<Event>, n: number): Promise<Event[]> {
  const out: Event[] = [];
  while (out.length < n) {
    const next = await iterator.next();
    if (next.done) break;
    out.push(next.value);
  }
  return out;
}

// Both subscriptions start from seq 0: without `after_seq` one starts where the board
// is when the iterator first connects, and on a loaded machine the posts below could
// commit before that (the test then waited forever for events from before it).
test("a subscription resumes across a daemon restart without gaps or duplicates", async () => {
  const daemon = await new Daemon().start();
  const sub = subscribe({ after_seq: 0 }, { socketPath: daemon.socketPath });
  const events = sub[Symbol.asyncIterator]();
  try {
    const poster = await CoorddClient.connect({ socketPath: daemon.socketPath });
    const first = take(events, 3);
    for (let n = 0; n < 3; n++) await poster.post({ title: `before ${n}` });
    poster.close();
    const before = await first;
    await daemon.stop();
    await daemon.start();
    const again = await CoorddClient.connect({ socketPath: daemon.socketPath });
    const rest = take(events, 3);
    for (let n = 0; n < 3; n++) await again.post({ title: `after ${n}` });
    again.close();
    const seqs = [...before, ...(await rest)].map((e) => e.seq);
    assert.deepEqual(seqs, [1, 2, 3, 4, 5, 6]);
    assert.ok(sub.resumes >= 1, "it subscribed again after the restart");
  } finally {
    sub.close();
    await daemon.destroy();
  }
});

test("a lagging subscription is closed by the daemon and resumes from its last seq", async () => {
  const daemon = await new Daemon().start();
  const sub = subscribe({ after_seq: 0 }, { socketPath: daemon.socketPath });
  const events = sub[Symbol.asyncIterator]();
  try {
    const poster = await CoorddClient.connect({ socketPath: daemon.socketPath });
    const firstOne = take(events, 1);
    await poster.post({ title: "first" });
    await firstOne;
    // The consumer stops reading the socket: the daemon's queue for it passes 1,000.
    (sub as unknown as { client: CoorddClient }).client.pauseReading();
    await Promise.all(Array.from({ length: 8000 }, (_, n) => poster.post({ title: `burst ${n}` })));
    (sub as unknown as { client: CoorddClient }).client.resumeReading();
    const rest = await take(events, 8000);
    assert.deepEqual(rest.map((e) => e.seq), Array.from({ length: 8000 }, (_, n) => n + 2));
    assert.ok(sub.resumes >= 1, "the daemon closed it as lagged and it resumed");
    poster.close();
  } finally {
    sub.close();
    await daemon.destroy();
  }
});

test("waitFor chains waits by seq", async () => {
  const daemon = await new Daemon().start();
  try {
    const client = await CoorddClient.connect({ socketPath: daemon.socketPath });
    setTimeout(() => void client.post({ title: "late", kind: "bug" }), 300);
    const found = await client.waitFor({ kind: "bug" }, 10);
    assert.equal(found.task?.title, "late");
    client.close();
  } finally {
    await daemon.destroy();
  }
});

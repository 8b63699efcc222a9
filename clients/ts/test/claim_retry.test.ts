/**
 * docs/PROTOCOL-1.2.md section 5a (issue 44 item 7): a claim whose answer is lost in a
 * crash is asked again with its key and returns the task it won. A proxy between the
 * client and the daemon drops the answer of the first `task.claim_next`; the test waits
 * until that claim is committed, kills the daemon -9, starts it again, and only then
 * breaks the client's connection: exactly what a client of the killed daemon sees.
 */

import assert from "node:assert/strict";
import net from "node:net";
import path from "node:path";
import { test } from "node:test";

import { CoorddClient } from "../src/index.js";
import { Daemon } from "./daemon.js";

/** Forwards every connection to `upstream`; the connection that sends the first
 * `task.claim_next` gets nothing back from then on, and is broken by `lose()`. */
class LossyProxy {
  readonly server: net.Server;
  private losing: net.Socket | null = null;
  claimSent!: Promise<void>;
  private sent!: () => void;

  constructor(readonly socketPath: string, upstream: string) {
    this.claimSent = new Promise((resolve) => { this.sent = resolve; });
    this.server = net.createServer((client) => {
      const daemon = net.createConnection({ path: upstream });
      let dropping = false;
      client.on("data", (chunk) => {
        if (this.losing === null && chunk.includes("task.claim_next")) {
          this.losing = client;
          dropping = true;
          this.sent();
        }
        daemon.write(chunk);
      });
      daemon.on("data", (chunk) => { if (!dropping) client.write(chunk); });
      client.on("close", () => daemon.destroy());
      daemon.on("close", () => { if (!dropping) client.destroy(); });
      client.on("error", () => daemon.destroy());
      daemon.on("error", () => undefined);
    });
  }

  listen(): Promise<void> {
    return new Promise((resolve) => this.server.listen(this.socketPath, resolve));
  }

  /** The client finds its connection gone, its answer never read. */
  lose(): void {
    this.losing?.destroy();
  }
}

test("a claimNext whose answer was lost in a kill -9 returns the task it won", async () => {
  const daemon = await new Daemon().start();
  const proxy = new LossyProxy(path.join(daemon.dir, "p.sock"), daemon.socketPath);
  await proxy.listen();
  try {
    const direct = await CoorddClient.connect({ socketPath: daemon.socketPath });
    const ids: number[] = [];
    for (let n = 0; n < 3; n++) ids.push((await direct.post({ title: `work ${n}` })).task.id);
    // Level-triggered: answers once a task is claimed, i.e. once the claim is committed.
    const committed = direct.wait({ state: "claimed", timeout_s: 120 });
    const client = await CoorddClient.connect({ socketPath: proxy.socketPath });
    const answer = client.claimNext({ agent: "w" });
    await proxy.claimSent;
    const claimed = await committed;
    direct.close();
    assert.equal(claimed.task?.id, ids[0]);
    await daemon.kill();
    await daemon.start();
    proxy.lose();
    const got = await answer;
    assert.equal(got.task?.id, ids[0]);
    assert.equal(got.task?.claimed_by, "w");
    const check = await CoorddClient.connect({ socketPath: daemon.socketPath });
    const held = await check.list({ state: "claimed" });
    check.close();
    assert.deepEqual(held.tasks.map((t) => [t.id, t.claimed_by, t.fence]), [[ids[0], "w", 1]]);
  } finally {
    proxy.server.close();
    await daemon.destroy();
  }
});

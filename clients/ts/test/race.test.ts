import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

import { CoorddClient } from "../src/index.js";
import { Daemon } from "./daemon.js";

const WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), "workers", "claimer.js");

type Outcome = { id: number; won: boolean; holder: string | null };

test("16 Node processes racing for the same 50 tasks: one winner each, losers told who", async () => {
  const daemon = await new Daemon().start();
  try {
    const setup = await CoorddClient.connect({ socketPath: daemon.socketPath });
    for (let n = 0; n < 50; n++) await setup.post({ title: `t${n}` });
    setup.close();
    const procs = Array.from({ length: 16 }, (_, n) =>
      spawn(process.execPath, [WORKER, daemon.socketPath, `node-${n}`, "50"], { stdio: ["pipe", "pipe", "inherit"] }),
    );
    const lines = procs.map((p) => createInterface({ input: p.stdout! })[Symbol.asyncIterator]());
    for (const line of lines) assert.equal((await line.next()).value, "ready");
    for (const p of procs) p.stdin!.write("go\n");
    const outcomes: Outcome[][] = [];
    for (const line of lines) outcomes.push(JSON.parse((await line.next()).value as string) as Outcome[]);
    for (let id = 1; id <= 50; id++) {
      const all = outcomes.map((o) => o.find((x) => x.id === id)!);
      const winners = all.filter((x) => x.won);
      assert.equal(winners.length, 1, `task ${id}`);
      const winner = `node-${outcomes.findIndex((o) => o.find((x) => x.id === id)!.won)}`;
      assert.ok(all.every((x) => x.holder === winner), `every loser of ${id} is told ${winner}`);
    }
  } finally {
    await daemon.destroy();
  }
});

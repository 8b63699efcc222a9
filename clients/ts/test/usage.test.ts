import assert from "node:assert/strict";
import { test } from "node:test";

import { InvalidParams } from "../src/index.js";
import { shareBoard } from "./daemon.js";

const board = shareBoard();
const P = "/ts-usage";

test("usage is reported once and charged to the held task (issue 48)", async () => {
  const info = await board.client.serverInfo();
  assert.ok(info.features.includes("token_ledger"));
  const posted = await board.client.post({ agent: "ts", project: P, title: "ledger" });
  await board.client.claim({ agent: "ts", id: posted.task.id });
  const entry = { id: "m1:r1", at: new Date().toISOString(), model: "claude-x", input: 7, output: 3 };
  const first = await board.client.reportUsage({ agent: "ts", project: P, host: "claude", entries: [entry] });
  assert.deepEqual([first.recorded, first.duplicates], [1, 0]);
  assert.deepEqual(first.charges.map((c) => [c.task_id, c.input, c.output]), [[posted.task.id, 7, 3]]);
  const again = await board.client.reportUsage({ agent: "ts", project: P, host: "claude", entries: [entry] });
  assert.deepEqual([again.recorded, again.duplicates], [0, 1]);
  const cost = await board.client.cost({ task_id: posted.task.id });
  assert.deepEqual([cost.totals.input, cost.totals.output], [7, 3]);
  assert.deepEqual(cost.rows.map((r) => [r.agent, r.model, r.entries]), [["ts", "claude-x", 1]]);
  await assert.rejects(board.client.reportUsage({ agent: "ts", project: P, host: "claude", entries: [] }), InvalidParams);
});

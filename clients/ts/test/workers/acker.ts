/**
 * The TypeScript client's side of tests/system/test_ack_parity.py: as a plugin would,
 * finish a task with its ack (`ackOf`) and post an ack by kind alone; print both acks.
 *
 * Usage: node acker.js SOCKET AGENT PROJECT TASK_ID TITLE
 */

import { ackOf, CoorddClient } from "../../src/index.js";

const [socketPath, agent, project, id, title] = process.argv.slice(2) as [string, string, string, string, string];
const client = await CoorddClient.connect({ socketPath });
const claim = await client.claim({ id: Number(id), agent });
if (!claim.won) throw new Error(`task ${id} is held by ${claim.task.claimed_by}`);
const done = await client.complete({ id: claim.task.id, agent, fence: claim.task.fence, then_post: ackOf(claim.task, title) });
const posted = await client.post({ title, kind: "ack", project, agent });
client.close();
process.stdout.write(JSON.stringify({ completed: done.posted, posted: posted.task }) + "\n");

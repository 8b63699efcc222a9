/** One racing process: connect, wait for "go" on stdin, claim every task, print the outcomes. */

import { CoorddClient } from "../../src/index.js";

const [socketPath, agent, count] = process.argv.slice(2) as [string, string, string];
const client = await CoorddClient.connect({ socketPath });
await client.ping();
process.stdout.write("ready\n");
await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
const outcomes = await Promise.all(
  Array.from({ length: Number(count) }, async (_, n) => {
    const claim = await client.claim({ id: n + 1, agent });
    return { id: n + 1, won: claim.won, holder: claim.task.claimed_by };
  }),
);
client.close();
process.stdout.write(JSON.stringify(outcomes) + "\n");
process.exit(0);

/**
 * One benchmark client process, the Node twin of `bench/worker.py` (same arguments,
 * same barrier, same JSON), so `make bench` can compare the two clients in one run.
 *
 *   node build-test/bench/worker.js SOCKET claim AGENT COUNT FIRST_ID
 */

import { CoorddClient } from "../src/index.js";

const [socketPath, mode, agent, countText, firstText] = process.argv.slice(2) as string[];
const count = Number(countText);
const first = Number(firstText ?? "1");
const client = await CoorddClient.connect({ socketPath });
await client.ping();
process.stdout.write("ready\n");
await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
const latencies: number[] = [];
let won = 0;
for (let n = 0; n < count; n++) {
  const start = process.hrtime.bigint();
  if (mode === "ping") await client.ping();
  else if ((await client.claim({ id: first + n, agent: agent! })).won) won++;
  latencies.push(Number(process.hrtime.bigint() - start) / 1000);
}
client.close();
process.stdout.write(JSON.stringify({ latencies_us: latencies, won }) + "\n");
process.exit(0);

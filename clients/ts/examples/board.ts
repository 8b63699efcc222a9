/**
 * A plugin author's starting point: print the board, then follow its events.
 *
 *   npm run build:test && node build-test/examples/board.js [project]
 */

import { CoorddClient, DaemonUnavailable, subscribe } from "../src/index.js";

const project = process.argv[2];

try {
  const client = await CoorddClient.connect();
  const { tasks } = await client.list({ project, state: ["pending", "claimed"] });
  for (const task of tasks) {
    const who = task.claimed_by ?? (task.assignee ? `-> ${task.assignee}` : "");
    const blocked = task.blocked_by.length ? ` blocked by ${task.blocked_by.map((i) => `#${i}`).join(",")}` : "";
    console.log(`#${task.id} ${task.state.padEnd(8)} p${task.priority} ${who} ${task.title}${blocked}`);
  }
  client.close();
  console.log("following events (Ctrl-C to stop)...");
  for await (const event of subscribe({ project })) {
    const what = event.task?.title ?? event.slot?.name ?? event.landing?.branch ?? "";
    console.log(`${event.seq} ${event.type} #${event.task_id ?? "-"} by ${event.agent ?? "-"}: ${what}`);
  }
} catch (error) {
  if (error instanceof DaemonUnavailable) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}

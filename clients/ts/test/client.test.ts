import assert from "node:assert/strict";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";

import {
  Blocked, checkSocketPath, CoorddClient, DaemonUnavailable, defaultSocketPath, InvalidParams,
  LeaseLost, MethodNotFound, NotFound, Reserved,
} from "../src/index.js";
import { shareBoard } from "./daemon.js";

const board = shareBoard();
const P = "/ts-repo";

test("every method, with typed results and typed errors", async () => {
  assert.deepEqual(await board.client.ping(), { pong: true });
  const info = await board.client.serverInfo();
  assert.ok(info.features.includes("reservations") && info.protocol === 1);
  const a = (await board.client.post({ title: "migrate", project: P, agent: "ts" })).task;
  const b = (await board.client.post({ title: "switch", project: P, depends_on: [a.id], assignee: "ts" })).task;
  assert.deepEqual(b.blocked_by, [a.id]);
  assert.equal((await board.client.get(a.id)).task.title, "migrate");
  assert.deepEqual((await board.client.list({ project: P, ready: true })).tasks.map((t) => t.id), [a.id]);
  await assert.rejects(board.client.claim({ id: b.id, agent: "ts" }), Blocked);
  const won = await board.client.claim({ id: a.id, agent: "ts" });
  assert.ok(won.won);
  const lost = await board.client.claim({ id: a.id, agent: "other" });
  assert.equal(lost.won, false);
  assert.equal(lost.task.claimed_by, "ts");
  await board.client.renew({ id: a.id, agent: "ts", fence: won.task.fence, lease_s: 900 });
  assert.equal((await board.client.heartbeat({ agent: "ts" })).renewed, 1);
  await assert.rejects(board.client.complete({ id: a.id, agent: "other" }), LeaseLost);
  const done = await board.client.complete({
    id: a.id, agent: "ts", fence: won.task.fence,
    then_post: { title: "migrated", kind: "ack", state: "done", project: P },
  });
  assert.equal(done.posted?.kind, "ack");
  const next = await board.client.claimNext({ agent: "ts", project: P });
  assert.equal(next.task?.id, b.id);
  await board.client.release({ id: b.id, agent: "ts", assignee: "someone" });
  assert.equal((await board.client.assign({ id: b.id, assignee: null })).task.assignee, null);
  const c = (await board.client.claim({ id: b.id, agent: "ts" })).task;
  await board.client.fail({ id: b.id, agent: "ts", fence: c.fence, retry: true });
  await board.client.cancel({ id: b.id, reason: "no" });
  assert.equal((await board.client.reopen({ id: b.id })).task.state, "pending");
  const waited = await board.client.wait({ timeout_s: 0.1, kind: "never" });
  assert.equal(waited.task, null);
  const history = await board.client.eventsSince({ task_id: a.id });
  assert.ok(history.events.every((e) => e.task_id === a.id));
  assert.ok((await board.client.agents()).agents.some((x) => x.agent === "ts"));
  const held = await board.client.reserve({ agent: "ts", project: P, patterns: ["src/**"] });
  assert.equal(held.reservations[0]?.pattern, "src/**");
  const refused = await board.client.reserve({ agent: "b", project: P, patterns: ["src/a.ts"] }).catch((e) => e);
  assert.ok(refused instanceof Reserved && Array.isArray(refused.data.conflicts));
  assert.equal((await board.client.checkPaths({ project: P, paths: ["src/x"], agent: "b" })).conflicts.length, 1);
  assert.equal((await board.client.reservations({ project: P })).reservations.length, 1);
  assert.equal((await board.client.unreserve({ agent: "ts", project: P })).released, 1);
  await assert.rejects(board.client.get(99999), NotFound);
  await assert.rejects(board.client.call("task.get", { id: "x" }), InvalidParams);
  await assert.rejects(board.client.call("no.such"), MethodNotFound);
  const typo = await board.client.call("task.list", { projekt: P }).catch((e) => e);
  assert.ok(typo instanceof InvalidParams && typo.data.field === "projekt");
});

test("request: any method of the table, typed by the generated Methods map", async () => {
  const posted = await board.client.request("task.post", { title: "typed", project: "/typed", agent: "ts" });
  assert.equal(posted.task.title, "typed"); // ResultOf<"task.post"> is PostResult
  assert.deepEqual(await board.client.request("ping"), { pong: true }); // no params needed
  const listed = await board.client.request("task.list", { project: "/typed" });
  assert.deepEqual(listed.tasks.map((t) => t.id), [posted.task.id]);
  // null is "none", as omitted: a fresh claim (not a repeat of an unknown key), and no
  // follow-up to announce.
  const fresh = await board.client.claim({ id: posted.task.id, agent: "ts", request_key: null });
  assert.ok(fresh.won);
  const finished = await board.client.complete({ id: posted.task.id, agent: "ts", fence: fresh.task.fence, then_post: null });
  assert.equal(finished.posted, null);
  // The compiler holds a call to its method's params and result (tsc fails the build
  // if one of these lines stops being an error):
  // @ts-expect-error `agent` is required by task.claim's params
  await assert.rejects(board.client.request("task.claim", { id: listed.tasks[0]!.id }), InvalidParams);
  // @ts-expect-error `projekt` is no param of task.list
  await assert.rejects(board.client.request("task.list", { projekt: "/typed" }), InvalidParams);
  // @ts-expect-error no such method in the table
  await assert.rejects(board.client.request("no.such"), MethodNotFound);
  // @ts-expect-error `won` is task.claim's, not task.get's
  assert.equal((await board.client.request("task.get", { id: posted.task.id })).won, undefined);
});

test("batches answer in the order asked", async () => {
  const answers = await board.client.batch([
    { method: "ping" }, { method: "task.get", params: { id: 99999 } }, { method: "ping" },
  ]);
  assert.deepEqual(answers[0], { result: { pong: true } });
  assert.ok("error" in answers[1]! && answers[1].error instanceof NotFound);
});

test("1,000 concurrent calls pipelined on one connection", async () => {
  const results = await Promise.all(
    Array.from({ length: 1000 }, (_, n) => (n % 2 ? board.client.ping() : board.client.post({ title: `p${n}`, project: "/pipe" }))),
  );
  const ids = results.filter((r) => "task" in r).map((r) => (r as { task: { id: number } }).task.id);
  assert.equal(new Set(ids).size, 500);
});

test("a timeout and an abort end a call without ending the connection", async () => {
  await assert.rejects(board.client.call("task.wait", { timeout_s: 5, kind: "never" }, { timeoutMs: 100 }), DaemonUnavailable);
  const controller = new AbortController();
  const waiting = board.client.wait({ timeout_s: 30, kind: "never" }, { signal: controller.signal });
  controller.abort();
  await assert.rejects(waiting, /aborted/);
  assert.deepEqual(await board.client.ping(), { pong: true });
});

test("no daemon: the error says how to start one", async () => {
  const missing = await CoorddClient.connect({ socketPath: path.join(os.tmpdir(), "none.sock") }).catch((e) => e);
  assert.ok(missing instanceof DaemonUnavailable);
  assert.match(missing.message, /coord status/);
});

test("socket paths resolve as PROTOCOL.md section 1 says, and long ones are refused", () => {
  assert.equal(defaultSocketPath("/x.sock", {}), "/x.sock");
  assert.equal(defaultSocketPath(undefined, { COORDD_SOCKET: "/e.sock" }), "/e.sock");
  assert.equal(defaultSocketPath(undefined, { XDG_RUNTIME_DIR: "/run/user/1" }), "/run/user/1/coordd/coordd.sock");
  assert.match(defaultSocketPath(undefined, { TMPDIR: "/t" }), /^\/t\/coordd-\d+\/coordd\.sock$/);
  assert.throws(() => checkSocketPath("/" + "x".repeat(107), "linux"), /108 bytes, over the 107-byte limit/);
  assert.throws(() => checkSocketPath("/" + "x".repeat(103), "darwin"), /103-byte limit/);
  checkSocketPath("/" + "x".repeat(106), "linux");
});

test("a daemon that closes mid-frame fails the call, outcome unknown", async () => {
  const socketPath = path.join(board.daemon.dir, "liar.sock");
  const server = net.createServer((conn) => {
    conn.once("data", () => {
      conn.write(Buffer.from([0, 0, 0, 50, 123]));
      conn.destroy();
    });
  });
  await new Promise<void>((r) => server.listen(socketPath, r));
  const liar = await CoorddClient.connect({ socketPath });
  const failed = await liar.ping().catch((e) => e);
  assert.ok(failed instanceof DaemonUnavailable && failed.data.outcome === "unknown");
  assert.ok(liar.closed);
  server.close();
});

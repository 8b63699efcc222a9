/**
 * A daemon (here a fake one: a plain net server) that sends malformed frames must
 * never crash the Node host: each shape rejects the pending call with a typed error
 * (or is ignored, for an answer nobody waits for), and nothing is thrown uncaught.
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { after, afterEach, before, test } from "node:test";

import { CoorddClient, ProtocolError, subscribe } from "../src/index.js";
import { FrameDecoder } from "../src/framing.js";

const uncaught: unknown[] = [];
const onUncaught = (error: unknown): void => {
  uncaught.push(error);
};
let dir: string;
let servers: net.Server[] = [];

before(() => {
  dir = mkdtempSync("/tmp/coordd-ts-bad-");
  process.on("uncaughtException", onUncaught);
});
afterEach(() => {
  uncaught.length = 0;
  for (const server of servers) server.close();
  servers = [];
});
after(() => {
  process.off("uncaughtException", onUncaught);
  rmSync(dir, { recursive: true, force: true });
});

function frame(payload: string | Buffer): Buffer {
  const body = typeof payload === "string" ? Buffer.from(payload) : payload;
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length, 0);
  return Buffer.concat([head, body]);
}

type Request = { id: number; method: string };

/** A fake daemon: `answer` returns the raw bytes to send back for each request. */
async function fakeDaemon(answer: (request: Request, connection: number) => Buffer[]): Promise<string> {
  const socketPath = path.join(dir, `d${servers.length}-${Date.now()}.sock`);
  let connections = 0;
  const server = net.createServer((conn) => {
    const connection = ++connections;
    const decoder = new FrameDecoder();
    conn.on("error", () => {});
    conn.on("data", (chunk) => {
      for (const payload of decoder.push(chunk)) {
        const request = JSON.parse(payload.toString()) as Request;
        for (const bytes of answer(request, connection)) conn.write(bytes);
      }
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return socketPath;
}

/** Let the event loop run what the socket delivered (an uncaught throw would land here). */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 50));

const SHAPES: Array<[string, (id: number) => Buffer]> = [
  ["a length prefix of 0", () => Buffer.from([0, 0, 0, 0])],
  ["a length over the limit", () => Buffer.from([0xff, 0xff, 0xff, 0xff])],
  ["a payload that is not JSON", () => frame("{not json")],
  ["JSON null", () => frame("null")],
  ["a JSON number", () => frame("42")],
  ["a JSON string", () => frame('"pong"')],
  ["a batch holding null", (id) => frame(`[{"jsonrpc":"2.0","id":${id + 1},"result":{}},null]`)],
  ["an empty batch", () => frame("[]")],
  ["an error that is null", (id) => frame(`{"jsonrpc":"2.0","id":${id},"error":null}`)],
  ["an error that is not an error object", (id) => frame(`{"jsonrpc":"2.0","id":${id},"error":"boom"}`)],
  ["a frame-level error that is null", () => frame('{"jsonrpc":"2.0","id":null,"error":null}')],
  ["neither result nor error", (id) => frame(`{"jsonrpc":"2.0","id":${id}}`)],
];

for (const [shape, bytes] of SHAPES) {
  test(`${shape}: the call rejects with a ProtocolError, nothing is thrown uncaught`, async () => {
    const socketPath = await fakeDaemon((request) => [bytes(request.id)]);
    const client = await CoorddClient.connect({ socketPath, timeoutMs: 3000 });
    const errors: unknown[] = [];
    client.on("error", (error) => errors.push(error));
    const failed = await client.ping().catch((error: unknown) => error);
    await settle();
    client.close();
    assert.deepEqual(uncaught, [], `uncaught: ${String(uncaught[0])}`);
    assert.ok(failed instanceof ProtocolError, `rejected with ${String(failed)}`);
  });
}

test("a client nobody listens to for `error` survives a broken daemon", async () => {
  const socketPath = await fakeDaemon(() => [frame("null")]);
  const client = await CoorddClient.connect({ socketPath, timeoutMs: 3000 });
  await assert.rejects(client.ping(), ProtocolError);
  await assert.rejects(client.ping(), ProtocolError); // the connection stays broken
  await settle();
  assert.deepEqual(uncaught, []);
  assert.ok(client.closed);
});

test("an answer with an unknown id is ignored; the real answer still lands", async () => {
  const socketPath = await fakeDaemon((request) => [
    frame('{"jsonrpc":"2.0","id":999,"result":{"pong":false}}'),
    frame(`{"jsonrpc":"2.0","id":${request.id},"result":{"pong":true}}`),
  ]);
  const client = await CoorddClient.connect({ socketPath, timeoutMs: 3000 });
  assert.deepEqual(await client.ping(), { pong: true });
  client.close();
  await settle();
  assert.deepEqual(uncaught, []);
});

test("a subscription fed a malformed event resubscribes from its last seq", async () => {
  const event = (seq: number): string =>
    JSON.stringify({ jsonrpc: "2.0", method: "event", params: { event: { seq, type: "task.posted" } } });
  const subscribed: Array<number | undefined> = [];
  const socketPath = await fakeDaemon((request, connection) => {
    const params = (request as unknown as { params?: { after_seq?: number } }).params;
    subscribed.push(params?.after_seq);
    const ok = frame(`{"jsonrpc":"2.0","id":${request.id},"result":{"last_seq":0}}`);
    if (connection === 1) {
      return [ok, frame(event(1)), frame('{"jsonrpc":"2.0","method":"event","params":null}')];
    }
    return [ok, frame(event(2))];
  });
  const seqs: number[] = [];
  const subscription = subscribe({ after_seq: 0 }, { socketPath });
  for await (const received of subscription) {
    seqs.push(received.seq);
    if (seqs.length === 2) break;
  }
  await settle();
  assert.deepEqual(uncaught, []);
  assert.deepEqual(seqs, [1, 2]);
  assert.deepEqual(subscribed, [0, 1]);
});

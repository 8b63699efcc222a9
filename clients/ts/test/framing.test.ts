import assert from "node:assert/strict";
import { test } from "node:test";

import { encodeFrame, FrameDecoder, FrameError } from "../src/framing.js";

function random(seed: number): () => number {
  let x = seed;
  return () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

test("frames survive any split into chunks", () => {
  const rand = random(7);
  for (let round = 0; round < 200; round++) {
    const payloads = Array.from({ length: 1 + Math.floor(rand() * 8) }, () =>
      Buffer.from(JSON.stringify({ n: round, pad: "x".repeat(Math.floor(rand() * 5000)) })),
    );
    const wire = Buffer.concat(payloads.map((p) => encodeFrame(p)));
    const decoder = new FrameDecoder();
    const out: Buffer[] = [];
    let at = 0;
    while (at < wire.length) {
      const size = Math.max(1, Math.floor(rand() * (rand() < 0.5 ? 7 : 9000)));
      out.push(...decoder.push(wire.subarray(at, at + size)));
      at += size;
    }
    assert.deepEqual(out.map((b) => b.toString()), payloads.map((b) => b.toString()));
    assert.equal(decoder.pending, 0);
  }
});

test("a zero length and an oversized length are refused before buffering", () => {
  assert.throws(() => new FrameDecoder().push(Buffer.from([0, 0, 0, 0])), FrameError);
  const decoder = new FrameDecoder(1024);
  assert.throws(() => decoder.push(Buffer.from([0, 0, 4, 1])), /exceeds the 1024-byte limit/);
  assert.deepEqual(new FrameDecoder().push(Buffer.from([0, 0])), []); // half a length: waits
});

test("the encoder refuses what the daemon would refuse", () => {
  assert.throws(() => encodeFrame(Buffer.alloc(0)), FrameError);
  assert.throws(() => encodeFrame(Buffer.alloc(11), 10), /exceeds the 10-byte frame limit/);
  assert.deepEqual([...encodeFrame(Buffer.from("{}"))], [0, 0, 0, 2, 123, 125]);
});

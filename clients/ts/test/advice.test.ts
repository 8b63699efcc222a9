/**
 * Refusals in this client's terms (issue 47 item 4), from what a real daemon sends: a full
 * slot, paths reserved and a landing's turn name the call that waits (`acquireSlot`,
 * `reserve`, `startLanding` with `wait_s`) and the one that asks for a hand-over
 * (`requestRelease`), with times as "in 9 min (13:42Z)" and no Python repr; the daemon's
 * words stay in `wireMessage`.
 */

import assert from "node:assert/strict";
import { test } from "node:test";

import { Conflict, Reserved, when } from "../src/index.js";
import { shareBoard } from "./daemon.js";

const board = shareBoard();
const P = "/ts-advice";
const TIME = /in (under a minute|\d+ min|\d+ h) \(\d\d:\d\dZ\)/;

test("a full slot says who holds it, until when, and acquireSlot with wait_s", async () => {
  await board.client.acquireSlot({ agent: "codex-2", project: P, name: "test-db", ttl_s: 540 });
  const error = await board.client.acquireSlot({ agent: "ts", project: P, name: "test-db" }).then(
    () => assert.fail("the slot is full"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof Conflict);
  assert.match(error.message, /^slot test-db is full \(1 of 1\): held by codex-2, lease ending /);
  assert.match(error.message, TIME);
  assert.match(error.message, /call acquireSlot again with wait_s to wait for it, or do other work first$/);
  assert.doesNotMatch(error.message, /'test-db'|\d{4}-\d\d-\d\dT/);
  assert.match(error.wireMessage, /wait for it \(`wait_s`\)$/);
});

test("paths reserved say whose, until when, and how to ask for them", async () => {
  await board.client.reserve({ agent: "codex-2", project: P, patterns: ["src/parser.py"], ttl_s: 600 });
  const error = await board.client.reserve({ agent: "ts", project: P, patterns: ["src/**"] }).then(
    () => assert.fail("src/parser.py is reserved"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof Reserved);
  assert.match(error.message, /^src\/\*\* overlaps src\/parser\.py, held by codex-2, ending /);
  assert.match(error.message, TIME);
  assert.ok(
    error.message.endsWith(
      'call reserve again with wait_s to wait for it, or ask codex-2 to hand it over: requestRelease({ patterns: ["src/parser.py"] })',
    ),
    error.message,
  );
});

test("a time is said from now, as every surface says it", () => {
  const now = Date.parse("2026-12-03T13:33:00Z");
  assert.equal(when("2026-12-03T13:42:35.361298Z", now), "in 10 min (13:42Z)");
  assert.equal(when("2026-12-03T13:30:00Z", now), "3 min ago (13:30Z)");
  assert.equal(when("2026-12-05T13:42:00Z", now), "in 2 d (2026-12-05 13:42Z)");
});

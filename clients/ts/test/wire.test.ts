/**
 * The TS client agrees with the generated wire.ts (from the Python declarations), at
 * compile time where a type can say it and against a real daemon where it cannot.
 */

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  BOUNDS, CLIENT_ERROR_KINDS, CoorddError, DaemonUnavailable, ERROR_KINDS, errorFromWire,
  EVENT_TYPES, METHODS, SeveralBoards, STATES, TASK_KEYS, UntrustedSocket, WrongBoard,
  type Task, type TaskKey,
} from "../src/index.js";
import { shareBoard } from "./daemon.js";

/** The named members of `T`, without an index signature's `string` or `number`. */
type KnownKeys<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// Compile-time parity: a member added to `Task` or to the wire's Task only fails the build.
const taskKeysMatch: Same<KnownKeys<Task>, TaskKey> = true;

const board = shareBoard();

test("a task from the daemon has exactly the generated keys, in order", async () => {
  assert.ok(taskKeysMatch);
  const task = (await board.client.post({ title: "keys", project: "/ts-wire" })).task;
  assert.deepEqual(Object.keys(task), [...TASK_KEYS]);
  assert.ok(STATES.includes(task.state));
});

test("every generated method is one the daemon serves", async () => {
  for (const method of METHODS) {
    const answer = await board.client.call(method, {}).catch((e: unknown) => e);
    // Empty params are wrong for most methods; only an unknown method is -32601.
    assert.ok(!(answer instanceof CoorddError) || answer.code !== -32601, method);
  }
});

test("every kind maps to its own error class, and client kinds are set by the client", () => {
  for (const kind of ERROR_KINDS) {
    const error = errorFromWire({ code: -32603, message: "m", data: { kind } });
    assert.equal(error.kind, kind);
    assert.ok(kind === "internal_error" || error.constructor !== CoorddError, kind);
  }
  // An own-property check: `constructor` is not a kind, whatever Object.prototype says.
  assert.equal(errorFromWire({ code: -32001, message: "m", data: { kind: "constructor" } }).name, "NotFound");
  const client = [
    new DaemonUnavailable("m").kind,
    new UntrustedSocket("m").kind,
    new SeveralBoards("m").kind,
    new WrongBoard("m").kind,
  ].sort();
  assert.deepEqual(client, [...CLIENT_ERROR_KINDS]);
});

test("the daemon refuses one past a generated bound", async () => {
  assert.equal(EVENT_TYPES.length, BOUNDS.event_type_list.maxLength);
  const all = await board.client.eventsSince({ types: [...EVENT_TYPES], limit: BOUNDS.events_limit.maximum });
  assert.ok(Array.isArray(all.events));
  const long = "x".repeat(BOUNDS.title.maxLength + 1);
  const refused = await board.client.post({ title: long }).catch((e: unknown) => e);
  assert.ok(refused instanceof CoorddError && refused.data.field === "title");
});

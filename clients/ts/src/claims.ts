/**
 * A claim whose answer is lost is asked again, with the same key (docs/PROTOCOL-1.2.md
 * section 5a, issue 44 item 7).
 *
 * A claim can be made durable and its answer lost with the daemon (kill -9 between a
 * group commit and its replies). Asked again as a new call, `task.claim_next` would hand
 * out a second task and the first would stay held, by a worker that never heard of it,
 * until its lease ran out. So `claim` and `claimNext` send a `request_key` of their own
 * (to a daemon that names `claim_request_key`), and when the answer is lost (the
 * connection broke or no answer came: outcome unknown) ask again, on a new connection,
 * with the same key and `repeat: true`, while the daemon is away, for a bounded time: the
 * daemon answers a repeat with what the first call won. The Python clients do the same
 * (`claim_retry.py`).
 */

import { randomBytes } from "node:crypto";

import { DaemonUnavailable, Overloaded, ShuttingDown } from "./errors.js";

/** `server.info.features` names it when the daemon takes `request_key` on claims. */
export const CLAIM_REQUEST_KEY = "claim_request_key";
/** Milliseconds a lost claim is asked again while the daemon is away (a restart takes one or two seconds). */
export const CLAIM_RETRY_MS = 15_000;
const FIRST_PAUSE_MS = 50;
const MAX_PAUSE_MS = 1_000;

/** 128 random bits as 32 hex digits: never the key of another call. */
export function newRequestKey(): string {
  return randomBytes(16).toString("hex");
}

/** Whether the request may have reached the daemon and its answer did not come back. */
export function answerLost(error: unknown): boolean {
  return error instanceof DaemonUnavailable && error.data.outcome === "unknown";
}

/** The daemon is away for now (not "the daemon said no"). */
function away(error: unknown): boolean {
  return error instanceof DaemonUnavailable || error instanceof ShuttingDown || error instanceof Overloaded;
}

/**
 * `send()` on the connection in hand; once its answer is lost, `sendAgain()` (on a new
 * connection: a broken one stays broken) while the daemon is away, for `withinMs`. Only
 * a lost answer starts the retries: no daemon at the first attempt, or a refusal, is
 * reported as before.
 */
export async function retryingClaim<R>(
  method: string,
  key: string,
  send: () => Promise<R>,
  sendAgain: () => Promise<R>,
  withinMs: number = CLAIM_RETRY_MS,
): Promise<R> {
  try {
    return await send();
  } catch (error) {
    if (!answerLost(error)) throw error;
  }
  const deadline = Date.now() + withinMs;
  let pause = FIRST_PAUSE_MS;
  for (;;) {
    try {
      return await sendAgain();
    } catch (error) {
      if (!away(error)) throw error;
      if (Date.now() + pause > deadline) {
        throw new DaemonUnavailable(
          `${method}: its answer was lost and the daemon did not answer again within ${withinMs} ms` +
            ` (last: ${(error as Error).message}); the claim may have been made: ask again with` +
            ` request_key ${key} to learn what it won`,
          { outcome: "unknown", request_key: key },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(pause * 2, MAX_PAUSE_MS);
    }
  }
}

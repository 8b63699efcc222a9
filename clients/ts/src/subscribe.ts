/**
 * `subscribe`: events as an async iterator, on a connection of its own, that
 * resumes from the last seq it yielded after `subscription.closed` (lagged,
 * shutdown) and after the connection drops: no gaps, no duplicates.
 *
 * It connects when the iterator first asks for an event, not when `subscribe`
 * is called. Without `after_seq` it starts at the board's last seq as of that
 * moment, so events committed before it are not seen; pass `after_seq` (0 for
 * the whole log) to start from a known point.
 */

import { CoorddClient, type ConnectOptions } from "./client.js";
import { CoorddError } from "./errors.js";
import type { Event, SubscribeParams, SubscribeResult } from "./types.js";

/** Milliseconds between tries while the daemon cannot be reached. */
export const RECONNECT_DELAY_MS = 200;
/** Events held for a slow consumer before reading pauses (the daemon then closes the
 * subscription as lagged, and it resumes from the last seq: memory stays bounded). */
export const QUEUE_HIGH_WATER = 1000;

export interface SubscribeOptions extends ConnectOptions {
  /** Stop iterating; the iterator then ends. */
  signal?: AbortSignal;
}

export class Subscription implements AsyncIterable<Event> {
  /** The seq of the last event yielded (resume point). */
  lastSeq: number | undefined;
  /** How many times it subscribed again after the first (lag, restart, lost connection). */
  resumes = 0;
  private subscribed = false;
  private client: CoorddClient | null = null;
  private readonly queue: Event[] = [];
  private wake: (() => void) | null = null;
  private ended = false;
  private needReconnect = false;

  constructor(
    private readonly params: SubscribeParams,
    private readonly options: SubscribeOptions = {},
  ) {
    this.lastSeq = params.after_seq ?? undefined;
    options.signal?.addEventListener("abort", () => this.close(), { once: true });
  }

  close(): void {
    this.ended = true;
    this.client?.close();
    this.client = null;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Event> {
    try {
      while (!this.ended) {
        if (this.client === null) {
          await this.open();
          continue;
        }
        const event = this.queue.shift();
        if (this.queue.length < QUEUE_HIGH_WATER / 2) this.client.resumeReading();
        if (event !== undefined) {
          if (this.lastSeq !== undefined && event.seq <= this.lastSeq) continue; // replayed
          this.lastSeq = event.seq;
          yield event;
          continue;
        }
        if (this.needReconnect) {
          this.client.close();
          this.client = null;
          this.needReconnect = false;
          continue;
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = null;
      }
    } finally {
      this.close();
    }
  }

  private async open(): Promise<void> {
    for (;;) {
      if (this.ended) return;
      try {
        const client = await CoorddClient.connect(this.options);
        // Reset before subscribing: a `subscription.closed` or a malformed event may
        // arrive in the very chunk that answers the subscribe, and must not be lost.
        this.needReconnect = false;
        client.on("notification", (method: string, params: unknown) => this.onNotification(method, params));
        client.on("close", () => {
          this.needReconnect = true;
          this.wake?.();
        });
        const started = await client.call<SubscribeResult>("events.subscribe", {
          ...this.params,
          after_seq: this.lastSeq,
        });
        if (this.lastSeq === undefined) this.lastSeq = started.last_seq;
        if (this.subscribed) this.resumes++;
        this.subscribed = true;
        this.client = client;
        return;
      } catch (error) {
        if (!(error instanceof CoorddError)) throw error;
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_DELAY_MS));
      }
    }
  }

  private onNotification(method: string, params: unknown): void {
    if (method === "event") {
      const event = isObject(params) ? params.event : undefined;
      if (!isObject(event) || typeof event.seq !== "number") {
        // Not an event: resubscribe from the last seq yielded rather than guess.
        this.needReconnect = true;
        this.wake?.();
        return;
      }
      this.queue.push(event as unknown as Event);
      if (this.queue.length >= QUEUE_HIGH_WATER) this.client?.pauseReading();
    } else if (method === "subscription.closed") {
      this.needReconnect = true; // lagged or shutdown: resubscribe from lastSeq
    }
    this.wake?.();
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function subscribe(params: SubscribeParams = {}, options: SubscribeOptions = {}): Subscription {
  return new Subscription(params, options);
}

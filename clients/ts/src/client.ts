/**
 * `CoorddClient`: one connection to the daemon, calls pipelined and matched by id
 * (answers arrive in any order), a timeout and an AbortSignal per call, batches,
 * and one typed method per PROTOCOL.md 1.1 method, all built on `call`.
 */

import { EventEmitter } from "node:events";
import net from "node:net";

import { withAnnouncements } from "./acks.js";
import { resolveHuman } from "./human.js";
import { CLAIM_REQUEST_KEY, newRequestKey, retryingClaim } from "./claims.js";
import {
  CoorddError,
  DaemonUnavailable,
  errorFromWire,
  type ErrorData,
  ProtocolError,
} from "./errors.js";
import { DEFAULT_MAX_FRAME, encodeFrame, FrameDecoder, FrameError, MAX_ANSWER_FRAME } from "./framing.js";
import { checkSocketPath, defaultSocketPath, refuseForeignSocket } from "./paths.js";
import type * as T from "./types.js";
import { BOUNDS, type Method } from "./wire.js";
import type { ParamsOf, ResultOf } from "./wire_types.js";

/** Requests one client keeps in flight; more wait their turn here rather than draw
 * -32004 from the daemon's per-connection cap (512). */
export const DEFAULT_MAX_IN_FLIGHT = 256;
/** Milliseconds a call waits for its answer unless told otherwise. */
export const DEFAULT_TIMEOUT_MS = 60_000;
/** Extra milliseconds beyond a wait's own time (`timeout_s`, `wait_s`) for its answer. */
export const WAIT_SLACK_MS = 10_000;

const HOW_TO_START =
  "start one with `coord status` (which starts it), `make run` in a coordd checkout, " +
  "or the systemd/launchd service units (`coordd service install`)";

export interface ConnectOptions {
  /** The socket; else `$COORDD_SOCKET`, the runtime dir, or `$TMPDIR/coordd-<uid>`. */
  socketPath?: string;
  /** The default per-call timeout (60 s). */
  timeoutMs?: number;
  /** Requests in flight at once (256); further calls queue in the client. */
  maxInFlight?: number;
}

export interface CallOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** `request`'s arguments after the method: its params (optional when every one is) and options. */
export type RequestArgs<M extends Method> = {} extends ParamsOf<M>
  ? [params?: ParamsOf<M>, options?: CallOptions]
  : [params: ParamsOf<M>, options?: CallOptions];

export type BatchItem = { method: string; params?: object };
export type BatchAnswer<R = unknown> = { result: R } | { error: CoorddError };

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: CoorddError) => void;
  cleanup: () => void;
}

interface Response {
  jsonrpc?: string;
  id?: number | string | null;
  result?: unknown;
  error?: { code: number; message: string; data?: ErrorData };
  method?: string;
  params?: unknown;
}

/** Drops `undefined` members: an omitted optional param is not sent at all. */
function clean(params: object | undefined): object | undefined {
  if (params === undefined) return undefined;
  return Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined));
}

export class CoorddClient extends EventEmitter {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly decoder = new FrameDecoder(MAX_ANSWER_FRAME);
  private broken: CoorddError | null = null;
  private inFlight = 0;
  private readonly queued: Array<() => void> = [];
  private features: Promise<Set<string>> | null = null;

  private constructor(
    private readonly socket: net.Socket,
    readonly socketPath: string,
    private readonly timeoutMs: number,
    private readonly maxInFlight: number,
  ) {
    super();
    socket.on("data", (chunk) => this.onData(chunk));
    socket.on("close", () => this.breakWith(new DaemonUnavailable("the daemon closed the connection", { outcome: "unknown" })));
    socket.on("error", (error) => this.breakWith(new DaemonUnavailable(`connection lost: ${error.message}`, { outcome: "unknown" })));
  }

  /** Connect to the daemon; `DaemonUnavailable` (saying how to start one) if none answers. */
  static async connect(options: ConnectOptions = {}): Promise<CoorddClient> {
    const socketPath = defaultSocketPath(options.socketPath);
    checkSocketPath(socketPath);
    await refuseForeignSocket(socketPath);
    const socket = await new Promise<net.Socket>((resolve, reject) => {
      const s = net.createConnection({ path: socketPath });
      s.once("connect", () => resolve(s));
      s.once("error", (error: NodeJS.ErrnoException) =>
        reject(new DaemonUnavailable(`no coordd answers on ${socketPath} (${error.code ?? error.message}); ${HOW_TO_START}`)),
      );
    });
    return new CoorddClient(
      socket,
      socketPath,
      options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT,
    );
  }

  /** Whether the connection has ended (every further call rejects). */
  get closed(): boolean {
    return this.broken !== null;
  }

  close(): void {
    this.breakWith(new DaemonUnavailable("the client was closed"));
    this.socket.destroy();
  }

  /** Stop reading the socket (flow control: the daemon then holds, or drops, what it sends). */
  pauseReading(): void {
    this.socket.pause();
  }

  resumeReading(): void {
    this.socket.resume();
  }

  // --- calls -------------------------------------------------------------------------

  /** Any method, by name: the result object, or the error class of its kind. */
  call<R = unknown>(method: string, params?: object, options: CallOptions = {}): Promise<R> {
    params = resolveHuman(method, params); // `human` is this user's `human-<user>` (human.ts)
    const id = this.nextId++;
    const request = { jsonrpc: "2.0", id, method, ...(params !== undefined ? { params: clean(params) } : {}) };
    return this.send<R>([id], request, options, waitOf(params)).then((answers) => {
      const answer = answers[0]!;
      if ("error" in answer) throw answer.error;
      return answer.result as R;
    });
  }

  /**
   * Any method of the method table, typed by it (`wire_types.ts`'s `Methods`, generated
   * from the Python Structs): a method served since this client was written is called
   * here with its params and result checked by the compiler. Params may be left out
   * when none is required.
   */
  request<M extends Method>(method: M, ...[params, options]: RequestArgs<M>): Promise<ResultOf<M>> {
    return this.call<ResultOf<M>>(method, params, options);
  }

  /** Several calls in one frame; answers in the order of `items`, each a result or an error. */
  batch(items: BatchItem[], options: CallOptions = {}): Promise<BatchAnswer[]> {
    if (items.length === 0) return Promise.resolve([]);
    const ids = items.map(() => this.nextId++);
    const requests = items.map((item, n) => ({
      jsonrpc: "2.0",
      id: ids[n],
      method: item.method,
      ...(item.params !== undefined ? { params: clean(resolveHuman(item.method, item.params) as object) } : {}),
    }));
    const waits = Math.max(...items.map((item) => waitOf(item.params)));
    return this.send(ids, requests, options, waits);
  }

  private async send<R>(ids: number[], body: unknown, options: CallOptions, waitsMs: number): Promise<BatchAnswer<R>[]> {
    while (this.inFlight + ids.length > this.maxInFlight && this.inFlight > 0) {
      await new Promise<void>((resolve) => this.queued.push(resolve));
    }
    this.inFlight += ids.length;
    try {
      return await this.sendNow<R>(ids, body, options, waitsMs);
    } finally {
      this.inFlight -= ids.length;
      this.queued.shift()?.();
    }
  }

  private sendNow<R>(ids: number[], body: unknown, options: CallOptions, waitsMs: number): Promise<BatchAnswer<R>[]> {
    if (this.broken !== null) return Promise.reject(this.broken);
    let frame: Buffer;
    try {
      frame = encodeFrame(Buffer.from(JSON.stringify(body)), DEFAULT_MAX_FRAME);
    } catch (error) {
      return Promise.reject(new ProtocolError(String((error as Error).message), -32600, { kind: "frame_too_large" }));
    }
    const answers = new Map<number, BatchAnswer<R>>();
    return new Promise<BatchAnswer<R>[]>((resolve, reject) => {
      // An explicit timeout is the whole budget; the default grows by what the call may wait.
      const timeoutMs = options.timeoutMs ?? this.timeoutMs + waitsMs;
      const finish = (): void => {
        cleanup();
        resolve(ids.map((id) => answers.get(id)!));
      };
      const abandon = (error: CoorddError): void => {
        cleanup();
        reject(error);
      };
      const timer = setTimeout(
        () => abandon(new DaemonUnavailable(`no answer within ${timeoutMs} ms; the outcome is unknown`, { outcome: "unknown" })),
        timeoutMs,
      );
      const onAbort = (): void => abandon(new CoorddError("the call was aborted; its outcome is unknown", -32000, { kind: "aborted" }));
      options.signal?.addEventListener("abort", onAbort, { once: true });
      const cleanup = (): void => {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
        for (const id of ids) this.pending.delete(id);
      };
      for (const id of ids) {
        this.pending.set(id, {
          resolve: (result) => {
            answers.set(id, { result: result as R });
            if (answers.size === ids.length) finish();
          },
          reject: (error) => {
            answers.set(id, { error });
            if (answers.size === ids.length) finish();
          },
          cleanup,
        });
      }
      if (options.signal?.aborted) {
        onAbort();
        return;
      }
      this.socket.write(frame);
    });
  }

  private onData(chunk: Buffer): void {
    let frames: Buffer[];
    try {
      frames = this.decoder.push(chunk);
    } catch (error) {
      this.violation(`bad frame from the daemon: ${(error as FrameError).message}`, "invalid_request");
      return;
    }
    for (const frame of frames) {
      if (this.broken !== null) return;
      let message: unknown;
      try {
        message = JSON.parse(frame.toString("utf8"));
      } catch {
        this.violation("the daemon sent a frame that is not JSON", "parse_error");
        return;
      }
      // A frame is one response object or a non-empty batch of them (JSON-RPC 2.0
      // section 6); anything else cannot be matched to a call, so nothing on this
      // connection can be trusted any more: every pending call is failed with it.
      const items = Array.isArray(message) ? message : [message];
      if (items.length === 0 || !items.every(isObject)) {
        this.violation(
          `the daemon sent ${items.length === 0 ? "an empty batch" : "a frame that is not a response object"}`,
          "invalid_request",
        );
        return;
      }
      for (const response of items as Response[]) this.dispatch(response);
    }
  }

  /**
   * A daemon that breaks the protocol: every pending and later call rejects with a
   * `ProtocolError`, `error` is emitted if anyone listens (an unheard `error` event
   * would throw out of the socket's callback and take a Node host down), then `close`.
   */
  private violation(message: string, kind: "parse_error" | "invalid_request"): void {
    const error = new ProtocolError(message, kind === "parse_error" ? -32700 : -32600, { kind });
    if (this.broken === null && this.listenerCount("error") > 0) this.emit("error", error);
    this.breakWith(error);
    this.socket.destroy();
  }

  private dispatch(response: Response): void {
    const error = response.error;
    if (error !== undefined && !isWireError(error)) {
      this.violation("the daemon sent an error that is not an error object", "invalid_request");
      return;
    }
    if (response.id === undefined || response.id === null) {
      if (typeof response.method === "string") {
        this.emit("notification", response.method, response.params);
      } else if (error !== undefined) {
        this.breakWith(errorFromWire(error)); // a frame-level refusal: the daemon closes
      }
      return;
    }
    const pending = typeof response.id === "number" ? this.pending.get(response.id) : undefined;
    if (pending === undefined) return; // an answer to a call given up on (timeout, abort)
    if (error !== undefined) pending.reject(errorFromWire(error));
    else if (!("result" in response)) {
      pending.reject(new ProtocolError("the daemon answered with neither a result nor an error", -32600, { kind: "invalid_request" }));
    } else pending.resolve(response.result);
  }

  /** Whether the daemon serves a 1.1 or 1.2 feature (`server.info.features`), asked once. */
  async supports(feature: string): Promise<boolean> {
    this.features ??= this.serverInfo().then((info) => new Set(info.features));
    try {
      return (await this.features).has(feature);
    } catch (error) {
      this.features = null; // asked again next time
      throw error;
    }
  }

  /** A fresh key; or, for a caller's own key, a `repeat` (it asks what an earlier call won). */
  private async keyedClaim<M extends "task.claim" | "task.claim_next">(method: M, p: ParamsOf<M>, o?: CallOptions): Promise<ResultOf<M>> {
    type R = ResultOf<M>;
    if (!(await this.supports(CLAIM_REQUEST_KEY))) return this.call<R>(method, p, o);
    const key = p.request_key ?? newRequestKey();
    // A key of the caller's own (not null, which is "none", as omitted) asks what it won.
    const first = { ...p, request_key: key, ...(p.request_key != null ? { repeat: true } : {}) };
    const again = { ...first, repeat: true };
    return retryingClaim(
      method,
      key,
      () => this.call<R>(method, first, o),
      () => this.onNewConnection<R>(method, again, o),
    );
  }

  /** `task.post`, or `task.complete` with its `then_post`, with an ack in it posted done
   * (`acks.ts`); an ack asked for as pending work rejects with InvalidParams, unsent. */
  private async announcing<M extends "task.post" | "task.complete">(method: M, p: ParamsOf<M>, o?: CallOptions): Promise<ResultOf<M>> {
    return this.call<ResultOf<M>>(method, withAnnouncements(method, p), o);
  }

  /** One call on a connection of its own, closed after: this one, once broken, stays broken. */
  private async onNewConnection<R>(method: string, params: object, o?: CallOptions): Promise<R> {
    const fresh = await CoorddClient.connect({ socketPath: this.socketPath, timeoutMs: this.timeoutMs });
    try {
      return await fresh.call<R>(method, params, o);
    } finally {
      fresh.close();
    }
  }

  private breakWith(error: CoorddError): void {
    if (this.broken !== null) return;
    this.broken = error;
    for (const pending of [...this.pending.values()]) pending.reject(error);
    this.pending.clear();
    this.emit("close", error);
  }

  // --- one typed method per PROTOCOL.md method ----------------------------------------
  // Each sends through `request`, so the compiler holds it to the method table's types.

  ping(o?: CallOptions): Promise<T.PingResult> { return this.request("ping", undefined, o); }
  serverInfo(o?: CallOptions): Promise<T.ServerInfo> { return this.request("server.info", undefined, o); }
  /** An ack (`kind: "ack"`) is posted done, never as work (`acks.ts`). */
  post(p: T.PostParams, o?: CallOptions): Promise<T.PostResult> { return this.announcing("task.post", p, o); }
  get(id: number, o?: CallOptions): Promise<T.TaskResult> { return this.request("task.get", { id }, o); }
  list(p: T.ListParams = {}, o?: CallOptions): Promise<T.ListResult> { return this.request("task.list", p, o); }
  /** With a fresh `request_key`, asked again when its answer is lost (`claims.ts`); give
   * `request_key` only to learn what an earlier claim won (its error names the key). */
  claim(p: T.ClaimParams, o?: CallOptions): Promise<T.ClaimResult> { return this.keyedClaim("task.claim", p, o); }
  /** As `claim`: a lost answer is asked again with the same key, never as a second claim. */
  claimNext(p: T.ClaimNextParams, o?: CallOptions): Promise<T.MaybeTaskResult> {
    return this.keyedClaim("task.claim_next", p, o);
  }
  renew(p: T.RenewParams, o?: CallOptions): Promise<T.TaskResult> { return this.request("task.renew", p, o); }
  release(p: T.ReleaseParams, o?: CallOptions): Promise<T.TaskResult> { return this.request("task.release", p, o); }
  /** `then_post` as `post` sends it (an ack is done); `ackOf(task, title)` builds a task's ack. */
  complete(p: T.CompleteParams, o?: CallOptions): Promise<T.CompleteResult> { return this.announcing("task.complete", p, o); }
  fail(p: T.FailParams, o?: CallOptions): Promise<T.TaskResult> { return this.request("task.fail", p, o); }
  cancel(p: T.CancelParams, o?: CallOptions): Promise<T.TaskResult> { return this.request("task.cancel", p, o); }
  reopen(p: T.ReopenParams, o?: CallOptions): Promise<T.TaskResult> { return this.request("task.reopen", p, o); }
  /** `assignee: null` clears it (null is sent, unlike an omitted param). */
  assign(p: T.AssignParams, o?: CallOptions): Promise<T.TaskResult> { return this.request("task.assign", p, o); }
  wait(p: T.WaitParams, o?: CallOptions): Promise<T.WaitResult> { return this.request("task.wait", p, o); }
  heartbeat(p: T.HeartbeatParams, o?: CallOptions): Promise<T.HeartbeatResult> { return this.request("agent.heartbeat", p, o); }
  agents(o?: CallOptions): Promise<T.AgentsResult> { return this.request("agent.list", undefined, o); }
  /** Protocol 1.2 (`agent_release`): let go of what `of` holds, as `agent`, named in the history. */
  releaseAgent(p: T.ReleaseAgentParams, o?: CallOptions): Promise<T.ReleaseAgentResult> {
    return this.request("agent.release", p, o);
  }
  eventsSince(p: T.EventsSinceParams = {}, o?: CallOptions): Promise<T.EventsResult> { return this.request("events.since", p, o); }
  reserve(p: T.AcquireParams, o?: CallOptions): Promise<T.ReservationsResult> { return this.request("reservation.acquire", p, o); }
  unreserve(p: T.ReleaseReservationsParams, o?: CallOptions): Promise<T.ReleasedResult> {
    return this.request("reservation.release", p, o);
  }
  checkPaths(p: T.CheckParams, o?: CallOptions): Promise<T.CheckResult> { return this.request("reservation.check", p, o); }
  reservations(p: T.ListReservationsParams = {}, o?: CallOptions): Promise<T.ReservationsResult> {
    return this.request("reservation.list", p, o);
  }

  /**
   * Wait as long as you like: `task.wait` chained by seq in steps the daemon allows
   * (at most an hour each), so nothing is missed between steps.
   */
  async waitFor(p: Omit<T.WaitParams, "timeout_s">, totalSeconds: number, o?: CallOptions): Promise<T.WaitResult> {
    const deadline = Date.now() + totalSeconds * 1000;
    let afterSeq = p.after_seq;
    for (;;) {
      const left = Math.max(0, (deadline - Date.now()) / 1000);
      const step = Math.min(left, BOUNDS.timeout_s.maximum);
      const found = await this.wait({ ...p, after_seq: afterSeq, timeout_s: step }, o);
      if (found.task !== null || left <= step) return found;
      afterSeq = found.seq;
    }
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isWireError(value: unknown): value is { code: number; message: string; data?: ErrorData } {
  return (
    isObject(value) &&
    typeof value.code === "number" &&
    typeof value.message === "string" &&
    (value.data === undefined || value.data === null || isObject(value.data))
  );
}

/** Seconds a call may rightly wait in the daemon (`timeout_s`, `wait_s`), in ms. */
function waitOf(params: object | undefined): number {
  if (params === undefined) return 0;
  const p = params as { timeout_s?: unknown; wait_s?: unknown };
  const seconds = typeof p.timeout_s === "number" ? p.timeout_s : typeof p.wait_s === "number" ? p.wait_s : 0;
  return seconds > 0 ? seconds * 1000 + WAIT_SLACK_MS : 0;
}

/**
 * Slots, ports and the landing queue (docs/PROTOCOL-1.2.md sections 13 and 14, features
 * `slots` and `landing_queue`): their wire shapes, and their `CoorddClient` methods, added
 * to the class here (declaration merging) so client.ts stays one job. Importing the
 * package (index.ts) installs them.
 */

import { CoorddClient, type CallOptions } from "./client.js";
import type { Landing, SlotLease } from "./types.js";

export interface SlotResult { lease: SlotLease; holders?: number | null }
export interface SlotList { leases: SlotLease[] }
export interface Enqueued {
  landing: Landing;
  ahead: Landing[];
  reserved: Array<{ path: string; reservation: Record<string, unknown> }>;
  overlaps: Array<{ landing: number; branch: string; agent: string; paths: string[] }>;
}
export interface Started { landing: Landing; lease: SlotLease }
export interface Finished { landing: Landing }
export interface LandingList { landings: Landing[] }

declare module "./client.js" {
  interface CoorddClient {
    acquireSlot(p: { agent: string; project: string; name: string; capacity?: number; ttl_s?: number; task_id?: number; wait_s?: number }, o?: CallOptions): Promise<SlotResult>;
    releaseSlots(p: { agent: string; project: string; names?: string[]; ids?: number[] }, o?: CallOptions): Promise<{ released: number }>;
    slots(p?: { project?: string; agent?: string; name?: string }, o?: CallOptions): Promise<SlotList>;
    leasePort(p: { agent: string; project: string; name?: string; low?: number; high?: number; ttl_s?: number; task_id?: number }, o?: CallOptions): Promise<SlotResult>;
    enqueueLanding(p: { agent: string; project: string; branch: string; onto: string; paths: string[]; task_id?: number; ttl_s?: number }, o?: CallOptions): Promise<Enqueued>;
    startLanding(p: { agent: string; project: string; id: number; wait_s?: number }, o?: CallOptions): Promise<Started>;
    finishLanding(p: { agent: string; project: string; id: number; outcome: "landed" | "failed"; reason?: string; commit?: string }, o?: CallOptions): Promise<Finished>;
    landings(p?: { project?: string; onto?: string }, o?: CallOptions): Promise<LandingList>;
  }
}

type SlotMethods = Pick<
  CoorddClient,
  "acquireSlot" | "releaseSlots" | "slots" | "leasePort" | "enqueueLanding" | "startLanding" | "finishLanding" | "landings"
>;

const methods: SlotMethods & ThisType<CoorddClient> = {
  acquireSlot(p: { agent: string; project: string; name: string; capacity?: number; ttl_s?: number; task_id?: number; wait_s?: number }, o?: CallOptions): Promise<SlotResult> { return this.call("slot.acquire", p, o); },
  releaseSlots(p: { agent: string; project: string; names?: string[]; ids?: number[] }, o?: CallOptions): Promise<{ released: number }> { return this.call("slot.release", p, o); },
  slots(p: { project?: string; agent?: string; name?: string } = {}, o?: CallOptions): Promise<SlotList> { return this.call("slot.list", p, o); },
  leasePort(p: { agent: string; project: string; name?: string; low?: number; high?: number; ttl_s?: number; task_id?: number }, o?: CallOptions): Promise<SlotResult> { return this.call("port.lease", p, o); },
  enqueueLanding(p: { agent: string; project: string; branch: string; onto: string; paths: string[]; task_id?: number; ttl_s?: number }, o?: CallOptions): Promise<Enqueued> { return this.call("land.enqueue", p, o); },
  startLanding(p: { agent: string; project: string; id: number; wait_s?: number }, o?: CallOptions): Promise<Started> { return this.call("land.start", p, o); },
  finishLanding(p: { agent: string; project: string; id: number; outcome: "landed" | "failed"; reason?: string; commit?: string }, o?: CallOptions): Promise<Finished> { return this.call("land.finish", p, o); },
  landings(p: { project?: string; onto?: string } = {}, o?: CallOptions): Promise<LandingList> { return this.call("land.list", p, o); },
};

Object.assign(CoorddClient.prototype, methods);

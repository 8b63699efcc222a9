/**
 * Slots, ports and the landing queue (docs/PROTOCOL-1.2.md sections 13 and 14, features
 * `slots` and `landing_queue`): their `CoorddClient` methods, added to the class here
 * (declaration merging) so client.ts stays one job. Importing the package (index.ts)
 * installs them. Their types are generated (`wire_types.ts`).
 */

import { CoorddClient, type CallOptions } from "./client.js";
import type * as T from "./types.js";

declare module "./client.js" {
  interface CoorddClient {
    acquireSlot(p: T.SlotAcquireParams, o?: CallOptions): Promise<T.SlotResult>;
    releaseSlots(p: T.SlotReleaseParams, o?: CallOptions): Promise<T.Released>;
    slots(p?: T.SlotListParams, o?: CallOptions): Promise<T.SlotList>;
    leasePort(p: T.PortLeaseParams, o?: CallOptions): Promise<T.SlotResult>;
    enqueueLanding(p: T.LandEnqueueParams, o?: CallOptions): Promise<T.Enqueued>;
    startLanding(p: T.LandStartParams, o?: CallOptions): Promise<T.Started>;
    finishLanding(p: T.LandFinishParams, o?: CallOptions): Promise<T.Finished>;
    landings(p?: T.LandListParams, o?: CallOptions): Promise<T.LandingList>;
  }
}

type SlotMethods = Pick<
  CoorddClient,
  "acquireSlot" | "releaseSlots" | "slots" | "leasePort" | "enqueueLanding" | "startLanding" | "finishLanding" | "landings"
>;

const methods: SlotMethods & ThisType<CoorddClient> = {
  acquireSlot(p: T.SlotAcquireParams, o?: CallOptions): Promise<T.SlotResult> { return this.request("slot.acquire", p, o); },
  releaseSlots(p: T.SlotReleaseParams, o?: CallOptions): Promise<T.Released> { return this.request("slot.release", p, o); },
  slots(p: T.SlotListParams = {}, o?: CallOptions): Promise<T.SlotList> { return this.request("slot.list", p, o); },
  leasePort(p: T.PortLeaseParams, o?: CallOptions): Promise<T.SlotResult> { return this.request("port.lease", p, o); },
  enqueueLanding(p: T.LandEnqueueParams, o?: CallOptions): Promise<T.Enqueued> { return this.request("land.enqueue", p, o); },
  startLanding(p: T.LandStartParams, o?: CallOptions): Promise<T.Started> { return this.request("land.start", p, o); },
  finishLanding(p: T.LandFinishParams, o?: CallOptions): Promise<T.Finished> { return this.request("land.finish", p, o); },
  landings(p: T.LandListParams = {}, o?: CallOptions): Promise<T.LandingList> { return this.request("land.list", p, o); },
};

Object.assign(CoorddClient.prototype, methods);

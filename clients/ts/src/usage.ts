/**
 * The token ledger (docs/PROTOCOL-1.2.md section 15, feature `token_ledger`, issue 48):
 * its `CoorddClient` methods, added to the class here (declaration merging) as slots.ts
 * does, so client.ts stays one job. Importing the package (index.ts) installs them.
 * Token counts are facts the host reported; any price is the caller's estimate. Their
 * types are generated (`wire_types.ts`).
 */

import { CoorddClient, type CallOptions } from "./client.js";
import type * as T from "./types.js";

declare module "./client.js" {
  interface CoorddClient {
    reportUsage(p: T.UsageReportParams, o?: CallOptions): Promise<T.UsageReportResult>;
    cost(p?: T.CostQueryParams, o?: CallOptions): Promise<T.CostResult>;
  }
}

type UsageMethods = Pick<CoorddClient, "reportUsage" | "cost">;

const methods: UsageMethods & ThisType<CoorddClient> = {
  reportUsage(p: T.UsageReportParams, o?: CallOptions): Promise<T.UsageReportResult> { return this.request("usage.report", p, o); },
  cost(p: T.CostQueryParams = {}, o?: CallOptions): Promise<T.CostResult> { return this.request("cost.query", p, o); },
};

Object.assign(CoorddClient.prototype, methods);

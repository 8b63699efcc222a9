/**
 * File edits and the pre-edit verdict (docs/PROTOCOL-1.2.md section 11, feature `file_edits`).
 * Their `CoorddClient` methods are added to the class here (declaration merging), as
 * slots.ts does, so client.ts stays one job. Importing the package (index.ts) installs
 * them. Their types are generated (`wire_types.ts`).
 */

import { CoorddClient, type CallOptions } from "./client.js";
import type * as T from "./types.js";

declare module "./client.js" {
  interface CoorddClient {
    fileGuard(p: T.GuardParams, o?: CallOptions): Promise<T.GuardResult>;
    recordEdit(p: T.RecordEditParams, o?: CallOptions): Promise<T.RecordResult>;
    recordRead(p: T.RecordReadParams, o?: CallOptions): Promise<T.RecordResult>;
    recentEdits(p: T.RecentParams, o?: CallOptions): Promise<T.RecentResult>;
  }
}

type Methods = Pick<CoorddClient, "fileGuard" | "recordEdit" | "recordRead" | "recentEdits">;

const methods: Methods & ThisType<CoorddClient> = {
  fileGuard(p: T.GuardParams, o?: CallOptions): Promise<T.GuardResult> { return this.request("file.guard", p, o); },
  recordEdit(p: T.RecordEditParams, o?: CallOptions): Promise<T.RecordResult> { return this.request("file.record_edit", p, o); },
  recordRead(p: T.RecordReadParams, o?: CallOptions): Promise<T.RecordResult> { return this.request("file.record_read", p, o); },
  recentEdits(p: T.RecentParams, o?: CallOptions): Promise<T.RecentResult> { return this.request("file.recent", p, o); },
};

Object.assign(CoorddClient.prototype, methods);

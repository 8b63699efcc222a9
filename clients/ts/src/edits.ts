/**
 * File edits and the pre-edit verdict (docs/PROTOCOL-1.2.md section 11, feature `file_edits`).
 * Their `CoorddClient` methods are added to the class here (declaration merging), as
 * slots.ts does, so client.ts stays one job. Importing the package (index.ts) installs them.
 */

import { CoorddClient, type CallOptions } from "./client.js";
import type { GuardResult, RecentResult, RecordResult } from "./types.js";

declare module "./client.js" {
  interface CoorddClient {
    fileGuard(p: { agent: string; project: string; worktree: string; paths: string[]; hashes?: string[]; auto_reserve?: boolean; ttl_s?: number }, o?: CallOptions): Promise<GuardResult>;
    recordEdit(p: { agent: string; project: string; worktree: string; paths: string[]; hashes: string[] }, o?: CallOptions): Promise<RecordResult>;
    recordRead(p: { agent: string; project: string; worktree: string; paths: string[]; hashes: string[] }, o?: CallOptions): Promise<RecordResult>;
    recentEdits(p: { project: string; agent?: string; limit?: number }, o?: CallOptions): Promise<RecentResult>;
  }
}

type Methods = Pick<CoorddClient, "fileGuard" | "recordEdit" | "recordRead" | "recentEdits">;

const methods: Methods & ThisType<CoorddClient> = {
  fileGuard(p: { agent: string; project: string; worktree: string; paths: string[]; hashes?: string[]; auto_reserve?: boolean; ttl_s?: number }, o?: CallOptions): Promise<GuardResult> { return this.call("file.guard", p, o); },
  recordEdit(p: { agent: string; project: string; worktree: string; paths: string[]; hashes: string[] }, o?: CallOptions): Promise<RecordResult> { return this.call("file.record_edit", p, o); },
  recordRead(p: { agent: string; project: string; worktree: string; paths: string[]; hashes: string[] }, o?: CallOptions): Promise<RecordResult> { return this.call("file.record_read", p, o); },
  recentEdits(p: { project: string; agent?: string; limit?: number }, o?: CallOptions): Promise<RecentResult> { return this.call("file.recent", p, o); },
};

Object.assign(CoorddClient.prototype, methods);

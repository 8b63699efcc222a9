/**
 * The token ledger (docs/PROTOCOL-1.2.md section 15, feature `token_ledger`, issue 48):
 * its wire shapes and its `CoorddClient` methods, added to the class here (declaration
 * merging) as slots.ts does, so client.ts stays one job. Importing the package
 * (index.ts) installs them. Token counts are facts the host reported; any price is
 * the caller's estimate.
 */

import { CoorddClient, type CallOptions } from "./client.js";
import type { BudgetCrossing } from "./types.js";

export interface UsageTokens { input: number; output: number; cache_creation: number; cache_read: number }
/** One model call as the host counted it; `id` is unique per host (the dedup key). */
export interface UsageEntry extends Partial<UsageTokens> { id: string; at: string; model: string }
export interface Charge extends UsageTokens { task_id: number | null }
export interface UsageReportResult { recorded: number; duplicates: number; charges: Charge[]; seq?: number | null; budgets?: BudgetCrossing[] }
export interface CostRow extends UsageTokens { task_id: number | null; agent: string; model: string; entries: number }
export interface Budget { task_id: number; tokens: number; spent: number }
export interface CostResult { rows: CostRow[]; totals: UsageTokens; more?: boolean; budgets?: Budget[] }

declare module "./client.js" {
  interface CoorddClient {
    reportUsage(p: { agent: string; project: string; host: string; entries: UsageEntry[]; session?: string }, o?: CallOptions): Promise<UsageReportResult>;
    cost(p?: { project?: string; task_id?: number; agent?: string; model?: string; since?: string; until?: string; limit?: number }, o?: CallOptions): Promise<CostResult>;
  }
}

type UsageMethods = Pick<CoorddClient, "reportUsage" | "cost">;

const methods: UsageMethods & ThisType<CoorddClient> = {
  reportUsage(p: { agent: string; project: string; host: string; entries: UsageEntry[]; session?: string }, o?: CallOptions): Promise<UsageReportResult> { return this.call("usage.report", p, o); },
  cost(p: { project?: string; task_id?: number; agent?: string; model?: string; since?: string; until?: string; limit?: number } = {}, o?: CallOptions): Promise<CostResult> { return this.call("cost.query", p, o); },
};

Object.assign(CoorddClient.prototype, methods);

/**
 * The wire shapes: every params and result interface is generated from the Python
 * Structs the method table names (`wire_types.ts`, `make ts-wire`), so a new method
 * has its types, and `CoorddClient.request` its typed call, with no TS written by
 * hand. A field an older (1.1 or later) daemon may leave out is optional; `Task`,
 * `SlotLease`, `Landing` and `ServerInfo` let a newer daemon's members through as
 * `unknown` (the rest pass through at run time, untyped).
 */

export type * from "./wire_types.js";
import type { Tokens } from "./wire_types.js";

/** A usage report's or cost row's four token counts (the wire's `Tokens`). */
export type UsageTokens = Tokens;

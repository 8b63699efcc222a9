/**
 * The wire shapes: every params and result interface is generated from the Python
 * Structs the method table names (`wire_types.ts`, `make ts-wire`), so a new method
 * has its types, and `CoorddClient.request` its typed call, with no TS written by
 * hand. Fields a newer daemon adds pass through at run time; a field an older daemon
 * may leave out is optional.
 */

export type * from "./wire_types.js";
import type { Tokens } from "./wire_types.js";

/** A usage report's or cost row's four token counts (the wire's `Tokens`). */
export type UsageTokens = Tokens;

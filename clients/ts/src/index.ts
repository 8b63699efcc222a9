/** coordd-client: a client for the coordd daemon, for IDE plugins and other Node hosts. */

export { clock, explain, left, refusal, when } from "./advice.js";
export { HUMAN, HUMAN_PREFIX, humanAgent, isHuman, resolveHuman } from "./human.js";
export { ackOf, ackTags, announced, isAnnouncement, linkTag } from "./acks.js";
export { CoorddClient, DEFAULT_TIMEOUT_MS, type BatchAnswer, type BatchItem, type CallOptions, type ConnectOptions, type RequestArgs } from "./client.js";
export * from "./errors.js";
export { DEFAULT_MAX_FRAME, encodeFrame, FrameDecoder, FrameError, MAX_ANSWER_FRAME } from "./framing.js";
export { checkSocketPath, defaultSocketPath, SOCKET_ENV, sunPathLimit } from "./paths.js";
export { subscribe, Subscription, type SubscribeOptions } from "./subscribe.js";
export type * from "./types.js";
export * from "./wire.js";
// Issue 35: slots, ports and the landing queue (adds their CoorddClient methods).
import "./slots.js";
// Sections 11 and 12: file edits, messages and release requests (their CoorddClient methods).
import "./edits.js";
import "./messages.js";
// Issue 48: the token ledger (usage.report, cost.query).
import "./usage.js";

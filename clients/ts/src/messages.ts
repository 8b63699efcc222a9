/**
 * Messages and release requests (docs/PROTOCOL-1.2.md section 12, features `messages` and
 * `release_requests`): to `to`, else the thread of `task_id`, else (a reply) the sender of
 * `reply_to`, else every live agent of the project.
 * Their `CoorddClient` methods are added to the class here (declaration merging), as
 * slots.ts does, so client.ts stays one job. Importing the package (index.ts) installs them.
 */

import { CoorddClient, type CallOptions } from "./client.js";
import type { AckResult, AnswerResult, InboxResult, MessageResult, RequestResult, SendResult } from "./types.js";

declare module "./client.js" {
  interface CoorddClient {
    sendMessage(p: { agent: string; project: string; body: string; to?: string; task_id?: number; reply_to?: number; kind?: "message" | "question"; idempotency_key?: string }, o?: CallOptions): Promise<SendResult>;
    readMessages(p: { agent: string; after_id?: number; limit?: number }, o?: CallOptions): Promise<InboxResult>;
    ackMessages(p: { agent: string; up_to: number }, o?: CallOptions): Promise<AckResult>;
    waitMessages(p: { agent: string; timeout_s: number; after_id?: number }, o?: CallOptions): Promise<InboxResult>;
    getMessage(id: number, o?: CallOptions): Promise<MessageResult>;
    requestRelease(p: { agent: string; project: string; patterns?: string[]; task_id?: number; to?: string; body?: string; ttl_s?: number; idempotency_key?: string }, o?: CallOptions): Promise<RequestResult>;
    answerRequest(p: { agent: string; id: number; decision: "approve" | "deny" | "narrow"; patterns?: string[]; reason?: string }, o?: CallOptions): Promise<AnswerResult>;
  }
}

type Methods = Pick<CoorddClient, "sendMessage" | "readMessages" | "ackMessages" | "waitMessages" | "getMessage" | "requestRelease" | "answerRequest">;

const methods: Methods & ThisType<CoorddClient> = {
  sendMessage(p: { agent: string; project: string; body: string; to?: string; task_id?: number; reply_to?: number; kind?: "message" | "question"; idempotency_key?: string }, o?: CallOptions): Promise<SendResult> { return this.call("message.send", p, o); },
  readMessages(p: { agent: string; after_id?: number; limit?: number }, o?: CallOptions): Promise<InboxResult> { return this.call("message.read", p, o); },
  ackMessages(p: { agent: string; up_to: number }, o?: CallOptions): Promise<AckResult> { return this.call("message.ack", p, o); },
  waitMessages(p: { agent: string; timeout_s: number; after_id?: number }, o?: CallOptions): Promise<InboxResult> { return this.call("message.wait", p, o); },
  getMessage(id: number, o?: CallOptions): Promise<MessageResult> { return this.call("message.get", { id }, o); },
  requestRelease(p: { agent: string; project: string; patterns?: string[]; task_id?: number; to?: string; body?: string; ttl_s?: number; idempotency_key?: string }, o?: CallOptions): Promise<RequestResult> { return this.call("request.release", p, o); },
  answerRequest(p: { agent: string; id: number; decision: "approve" | "deny" | "narrow"; patterns?: string[]; reason?: string }, o?: CallOptions): Promise<AnswerResult> { return this.call("request.answer", p, o); },
};

Object.assign(CoorddClient.prototype, methods);

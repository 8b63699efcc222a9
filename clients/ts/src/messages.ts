/**
 * Messages and release requests (docs/PROTOCOL-1.2.md section 12, features `messages` and
 * `release_requests`): to `to`, else the thread of `task_id`, else (a reply) the sender of
 * `reply_to`, else every live agent of the project.
 * Their `CoorddClient` methods are added to the class here (declaration merging), as
 * slots.ts does, so client.ts stays one job. Importing the package (index.ts) installs
 * them. Their types are generated (`wire_types.ts`).
 */

import { CoorddClient, type CallOptions } from "./client.js";
import type * as T from "./types.js";

declare module "./client.js" {
  interface CoorddClient {
    sendMessage(p: T.SendParams, o?: CallOptions): Promise<T.SendResult>;
    readMessages(p: T.ReadParams, o?: CallOptions): Promise<T.InboxResult>;
    ackMessages(p: T.AckParams, o?: CallOptions): Promise<T.AckResult>;
    waitMessages(p: T.MessageWaitParams, o?: CallOptions): Promise<T.InboxResult>;
    getMessage(id: number, o?: CallOptions): Promise<T.MessageResult>;
    requestRelease(p: T.RequestReleaseParams, o?: CallOptions): Promise<T.RequestResult>;
    answerRequest(p: T.AnswerParams, o?: CallOptions): Promise<T.AnswerResult>;
  }
}

type Methods = Pick<CoorddClient, "sendMessage" | "readMessages" | "ackMessages" | "waitMessages" | "getMessage" | "requestRelease" | "answerRequest">;

const methods: Methods & ThisType<CoorddClient> = {
  sendMessage(p: T.SendParams, o?: CallOptions): Promise<T.SendResult> { return this.request("message.send", p, o); },
  readMessages(p: T.ReadParams, o?: CallOptions): Promise<T.InboxResult> { return this.request("message.read", p, o); },
  ackMessages(p: T.AckParams, o?: CallOptions): Promise<T.AckResult> { return this.request("message.ack", p, o); },
  waitMessages(p: T.MessageWaitParams, o?: CallOptions): Promise<T.InboxResult> { return this.request("message.wait", p, o); },
  getMessage(id: number, o?: CallOptions): Promise<T.MessageResult> { return this.request("message.get", { id }, o); },
  requestRelease(p: T.RequestReleaseParams, o?: CallOptions): Promise<T.RequestResult> { return this.request("request.release", p, o); },
  answerRequest(p: T.AnswerParams, o?: CallOptions): Promise<T.AnswerResult> { return this.request("request.answer", p, o); },
};

Object.assign(CoorddClient.prototype, methods);

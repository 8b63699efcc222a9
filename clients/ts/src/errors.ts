/** One error class per kind of PROTOCOL.md section 3, each carrying the error's `data`. */

import { refusal } from "./advice.js";
import type { ErrorKind } from "./wire.js";

export type ErrorData = { kind?: string; [key: string]: unknown };

export class CoorddError extends Error {
  override name = "CoorddError";
  constructor(
    message: string,
    readonly code: number,
    readonly data: ErrorData = {},
    /** The daemon's own words, when `message` says them in this client's terms (advice.ts). */
    readonly wireMessage: string = message,
  ) {
    super(message);
  }

  /** The error's kind (`data.kind`), e.g. `"lease_lost"`. */
  get kind(): string {
    return typeof this.data.kind === "string" ? this.data.kind : "internal_error";
  }
}

/** The request was not understood: bad JSON, bad envelope, unknown method, bad params. */
export class ProtocolError extends CoorddError {
  override name = "ProtocolError";
}
export class InvalidParams extends ProtocolError {
  override name = "InvalidParams";
}
/**
 * 1.2 section 12: a message to a name the daemon has never seen, past its cap (a typo,
 * most likely; `data.agent`, `data.unread`, `data.limit`). Not retryable until the name is seen.
 */
export class RecipientNeverSeen extends InvalidParams {
  override name = "RecipientNeverSeen";
}
export class MethodNotFound extends ProtocolError {
  override name = "MethodNotFound";
}
export class InternalError extends CoorddError {
  override name = "InternalError";
}
export class NotFound extends CoorddError {
  override name = "NotFound";
}
export class Conflict extends CoorddError {
  override name = "Conflict";
}
/** A claim of a task whose dependencies are not done (`data.task` says which). */
export class Blocked extends Conflict {
  override name = "Blocked";
}
/** A reservation refused; `data.conflicts` names what is in the way. */
export class Reserved extends Conflict {
  override name = "Reserved";
}
/** 1.2 (flag `agent_ended`): a hand-over to an agent whose end was reported (`data.agent`, `data.ended_at`). */
export class AgentEnded extends Conflict {
  override name = "AgentEnded";
}
export class LeaseLost extends CoorddError {
  override name = "LeaseLost";
}
export class Overloaded extends CoorddError {
  override name = "Overloaded";
}
export class ShuttingDown extends CoorddError {
  override name = "ShuttingDown";
}
/** Client side: no daemon answered, or the connection dropped (the outcome is unknown). */
export class DaemonUnavailable extends CoorddError {
  override name = "DaemonUnavailable";
  constructor(message: string, data: ErrorData = {}) {
    super(message, -32000, { kind: "daemon_unavailable", ...data });
  }
}

type ErrorClass = new (message: string, code: number, data: ErrorData, wireMessage?: string) => CoorddError;

/** Every kind a daemon sends (wire.ts's ERROR_KINDS): the compiler refuses a missing or an extra one. */
const BY_KIND: Record<ErrorKind, ErrorClass> = {
  parse_error: ProtocolError,
  invalid_request: ProtocolError,
  frame_too_large: ProtocolError,
  method_not_found: MethodNotFound,
  invalid_params: InvalidParams,
  recipient_never_seen: RecipientNeverSeen,
  internal_error: InternalError,
  not_found: NotFound,
  conflict: Conflict,
  blocked: Blocked,
  reserved: Reserved,
  agent_ended: AgentEnded,
  lease_lost: LeaseLost,
  overloaded: Overloaded,
  shutting_down: ShuttingDown,
};

const BY_CODE: Record<number, ErrorClass> = {
  [-32700]: ProtocolError,
  [-32600]: ProtocolError,
  [-32601]: MethodNotFound,
  [-32602]: InvalidParams,
  [-32603]: InternalError,
  [-32001]: NotFound,
  [-32002]: Conflict,
  [-32003]: LeaseLost,
  [-32004]: Overloaded,
  [-32005]: ShuttingDown,
};

/** The exception an error response describes: by kind first, then by code. */
export function errorFromWire(error: { code: number; message: string; data?: ErrorData }): CoorddError {
  const data = error.data ?? {};
  const kind = typeof data.kind === "string" ? data.kind : undefined;
  const known = kind !== undefined && Object.hasOwn(BY_KIND, kind) ? BY_KIND[kind as ErrorKind] : undefined;
  const cls = known ?? BY_CODE[error.code] ?? CoorddError;
  const said = refusal(kind ?? "", error.message, data);
  return new cls(said, error.code, data, error.message);
}

/** Client side: the socket is another user's, so it is not our daemon. */
export class UntrustedSocket extends CoorddError {
  override name = "UntrustedSocket";
  constructor(message: string) {
    super(message, -32000, { kind: "untrusted_socket" });
  }
}

/**
 * Client side (docs/PROTOCOL-1.2.md section 1a): the socket was derived, nobody answers on
 * it, and more than one of the user's boards is live. This client follows section 1 only
 * and never raises it; it is here so that code sharing errors with the Python client can
 * name it.
 */
export class SeveralBoards extends CoorddError {
  override name = "SeveralBoards";
  constructor(message: string) {
    super(message, -32000, { kind: "several_boards" });
  }
}

/**
 * Client side (section 1b): the daemon reached serves another board than the one the
 * caller's tab works on. Raised by surfaces that know their tab (hooks, `coord`); a
 * caller that knows which board it expects can raise it after comparing
 * `serverInfo().board_id`.
 */
export class WrongBoard extends CoorddError {
  override name = "WrongBoard";
  constructor(message: string) {
    super(message, -32000, { kind: "wrong_board" });
  }
}

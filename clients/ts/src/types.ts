/** The wire shapes of PROTOCOL.md sections 4, 6, 7, 9 and 10. Fields a newer daemon adds pass through. */

import type { EVENT_TYPES, STATES } from "./wire.js";

/** Derived from the generated wire.ts (declared once, in the Python wire package). */
export type State = (typeof STATES)[number];
export type EventType = (typeof EVENT_TYPES)[number];

export interface Task {
  id: number;
  project: string;
  kind: string;
  title: string;
  body: string;
  state: State;
  priority: number;
  tags: string[];
  created_by: string | null;
  created_at: string;
  updated_at: string;
  claimed_by: string | null;
  claimed_at: string | null;
  lease_expires_at: string | null;
  fence: number;
  attempts: number;
  result: string | null;
  assignee: string | null;
  depends_on: number[];
  blocked_by: number[];
  [more: string]: unknown;
}

/** Issue 35 (docs/PROTOCOL-1.2.md sections 13, 14): a slot or port lease, and a landing. */
/** One grant of a slot (`capacity` set) or of a port (`port` set). */
export interface SlotLease {
  id: number;
  project: string;
  name: string;
  agent: string;
  capacity: number | null;
  port: number | null;
  task_id: number | null;
  /** Larger for every later grant of the same name. */
  fence: number;
  created_at: string;
  /** When it runs out unless its agent calls again (a heartbeat renews it). */
  expires_at: string;
  ttl_s: number;
  [more: string]: unknown;
}

export interface Landing {
  id: number;
  project: string;
  onto: string;
  branch: string;
  agent: string;
  task_id: number | null;
  state: "queued" | "landing" | "landed" | "failed";
  paths: string[];
  created_at: string;
  updated_at: string;
  lease_id: number | null;
  reason: string | null;
  commit: string | null;
  expires_at: string;
  ttl_s: number;
  [more: string]: unknown;
}

export interface Event {
  seq: number;
  at: string;
  type: EventType;
  /** Null on 1.2's events with no task (edits, messages off a thread, slots, landings). */
  task_id: number | null;
  agent: string | null;
  /** Null or absent on those events, which reach only a caller naming their types. */
  task?: Task | null;
  /** Protocol 1.2 `agent.release` (feature `agent_release`): whose holding went, and why. */
  of?: string | null;
  reason?: string | null;
  /** Issue 35's slot and landing events: their project, and the lease or landing. */
  project?: string | null;
  slot?: SlotLease | null;
  landing?: Landing | null;
  /** 1.2 `file.edited` (section 11): what was edited, where. */
  paths?: string[] | null;
  worktree?: string | null;
  /** 1.2 `message.sent` (section 12): the message, as far as an event line shows it. */
  message?: MessageRef | null;
  /** 1.2 `usage.reported` (section 15): what one usage report added to the ledger. */
  usage?: UsageRef | null;
  /** 1.2 `usage.budget` (section 15): the budget a task's charges crossed. */
  budget?: BudgetCrossing | null;
}
/** A task's charged tokens crossed `threshold` percent (80 or 100) of its budget. */
export interface BudgetCrossing { task_id: number; tokens: number; spent: number; threshold: number; released?: boolean }
/** What a `usage.reported` event says: entries new to the ledger, their tokens, the tasks charged. */
export interface UsageRef { host: string; session?: string | null; recorded: number; tokens: number; task_ids: Array<number | null> }
/** What an event line shows of a `message.sent` event's message (`Message` has all). */
export interface MessageRef { id: number; sender: string; kind: string; to?: string | null; body: string }

export interface Reservation {
  id: number;
  project: string;
  agent: string;
  pattern: string;
  exclusive: boolean;
  reason: string | null;
  task_id: number | null;
  created_at: string;
  expires_at: string;
  ttl_s: number;
}

export interface PostParams {
  title: string;
  body?: string;
  kind?: string;
  project?: string;
  priority?: number;
  tags?: string[];
  agent?: string;
  state?: "pending" | "done";
  idempotency_key?: string;
  depends_on?: number[];
  assignee?: string;
  /** 1.2 section 15 (feature `token_budgets`): tokens the task may cost, all kinds summed. */
  budget?: number;
  /** With `budget`: release the holder's claim once it is spent. */
  budget_release?: boolean;
}

export interface ListParams {
  project?: string;
  state?: State | State[];
  kind?: string;
  tag?: string;
  claimed_by?: string;
  after_id?: number;
  limit?: number;
  assignee?: string;
  ready?: boolean;
}

export interface WaitParams {
  timeout_s: number;
  project?: string;
  kind?: string;
  state?: State | State[];
  tag?: string;
  title_contains?: string;
  after_seq?: number;
  assignee?: string;
  ready?: boolean;
}

export interface EventsSinceParams {
  after_seq?: number;
  limit?: number;
  project?: string;
  types?: EventType[];
  task_id?: number;
}

export interface SubscribeParams {
  after_seq?: number;
  project?: string;
  types?: EventType[];
}

export interface AcquireParams {
  agent: string;
  project: string;
  patterns: string[];
  exclusive?: boolean;
  ttl_s?: number;
  reason?: string;
  task_id?: number;
  wait_s?: number;
}

export interface ServerInfo {
  version: string;
  protocol: number;
  features: string[];
  pid: number;
  /** The SQLite file; null in team mode. */
  db_path: string | null;
  started_at: string;
  counts: Record<string, number>;
  last_seq: number;
  /** Team mode additions: the store (its DSN without the password), this node, live peers. */
  store?: { backend: "sqlite" | "postgresql"; location: string };
  node?: string;
  peers?: { node: string; last_seen: string }[];
  /** 1.2 section 1b (feature `board_id`): the store's id; absent from an older daemon. */
  board_id?: string;
  /** Beyond the protocol (additive; absent from older daemons): the writer, the waits, the queues. */
  writer?: { transactions: number; commands: number; largest_group: number; queued: number };
  waiters?: number;
  message_waiters?: number;
  subscriptions?: number;
  reservations?: { waiting: number; attempts: number };
  slots?: { waiting: number; attempts: number };
  [more: string]: unknown;
}

export interface PostResult { task: Task; created: boolean }
export interface TaskResult { task: Task }
export interface MaybeTaskResult { task: Task | null }
export interface ClaimResult { won: boolean; task: Task }
export interface CompleteResult { task: Task; posted: Task | null }
export interface ListResult { tasks: Task[]; next_after_id: number | null }
export interface WaitResult { task: Task | null; seq: number }
export interface EventsResult { events: Event[]; last_seq: number }
export interface HeartbeatResult { renewed: number; reservations_renewed?: number }
export interface AgentInfo { agent: string; last_seen: string; holding: number }
export interface AgentsResult { agents: AgentInfo[] }
export interface ReservationsResult { reservations: Reservation[] }
export interface ReleasedResult { released: number }
/** `agent.release` (protocol 1.2, feature `agent_release`): what was let go. */
export interface ReleaseAgentResult {
  claims: number; reservations: number; unassigned: number;
  /** Its slot and port leases ended (protocol 1.2 section 13); absent from an older daemon. */
  slots?: number;
}
export interface PathConflict { path: string; reservation: Reservation }
export interface CheckResult { conflicts: PathConflict[] }
export interface SubscribeResult { subscription: number; last_seq: number }

/** Protocol 1.2 section 11 (`file_edits`): recorded edits and the pre-edit verdict. */
export interface FileEdit { path: string; worktree: string; agent: string; at: string }
export interface StaleFile { path: string; agent: string; at: string }
export interface GuardResult {
  allowed: boolean;
  conflicts: PathConflict[];
  stale: StaleFile[];
  unrecorded: string[];
  reserved: Reservation[];
  task_id: number | null;
  renewed: number;
  others: FileEdit[];
}
/** `changed`: `file.record_read` only, absent from daemons before it. */
export interface RecordResult { recorded: number; changed?: StaleFile[] }
export interface RecentResult { edits: FileEdit[] }
// 1.2 section 12 (issue 34, features `messages` and `release_requests`).
/** What a release request asks for and where it stands. */
export interface RequestState {
  holder: string;
  patterns: string[] | null;
  task_id: number | null;
  status: "open" | "approved" | "denied" | "narrowed" | "expired";
  expires_at: string;
  granted?: string[] | null;
  reason?: string | null;
}
/** A message to an agent, a project or a task's thread; a question, request or answer. */
export interface Message {
  id: number;
  project: string;
  sender: string;
  kind: "message" | "question" | "request" | "answer";
  audience: "agent" | "project" | "task";
  to: string | null;
  task_id: number | null;
  reply_to: number | null;
  body: string;
  created_at: string;
  seq: number;
  answer_id?: number | null;
  open?: boolean;
  request?: RequestState | null;
}
/** A `message.sent` event: only to a subscription or `events.since` that names the type. */
export interface MessageEvent {
  seq: number;
  at: string;
  type: "message.sent";
  task_id: number | null;
  agent: string;
  message: Message;
  recipients: string[];
}
/** `never_seen` (feature `unseen_recipients`): recipients the daemon has never seen; absent from an older daemon. */
export interface SendResult { message: Message; created: boolean; recipients: string[]; never_seen?: string[] }
export interface InboxResult { messages: Message[]; cursor: number; more?: boolean }
export interface AckResult { cursor: number }
export interface MessageResult { message: Message; recipients: string[] }
export interface RequestResult { request: Message; created: boolean }
export interface AnswerResult { request: Message; answer: Message; reservations: Reservation[]; released?: string[]; task?: Task | null }

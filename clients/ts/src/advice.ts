/**
 * Refusals in this client's own terms (issue 47 item 4): the rule of
 * `coordd_apps/wording/advice.py` for a TypeScript caller. The daemon's refusals are written for
 * no one surface ("wait for it (`wait_s`)", an instant as `2026-12-03T13:42:35.361298Z`, a
 * pattern quoted as Python quotes it); the Python surfaces say them anew from the error's
 * `data`, and so does this client: a full slot, paths reserved and a landing's turn are
 * said with who holds what, until when ("in 9 min (13:42Z)"), and the call that waits or
 * asks for a hand-over, named as this client names it (`acquireSlot`, `reserve`,
 * `requestRelease`, `startLanding`, with `wait_s`). `errorFromWire` puts these words in
 * the error's `message`; the daemon's own stay in `wireMessage`.
 */

type Data = { [key: string]: unknown };
type Row = { [key: string]: unknown };

/** The clock read when no `now` is given (ms since the epoch). */
function nowMs(): number {
  return Date.now();
}

/** "in 9 min", "3 h ago", "in under a minute": whole minutes, as advice.py's `left`. */
export function left(at: string, now: number = nowMs()): string {
  const seconds = (Date.parse(at.slice(0, 19) + "Z") - now) / 1000;
  const minutes = Math.round(Math.abs(seconds) / 60);
  if (minutes < 1) return seconds >= 0 ? "in under a minute" : "just now";
  const span =
    minutes < 120 ? `${minutes} min` : minutes < 48 * 60 ? `${Math.round(minutes / 60)} h` : `${Math.round(minutes / 1440)} d`;
  return seconds >= 0 ? `in ${span}` : `${span} ago`;
}

/** `13:42Z`, with the date when it is not within a day of now. */
export function clock(at: string, now: number = nowMs()): string {
  const far = Math.abs(Date.parse(at.slice(0, 19) + "Z") - now) >= 86_400_000;
  return far ? `${at.slice(0, 10)} ${at.slice(11, 16)}Z` : `${at.slice(11, 16)}Z`;
}

/** `in 9 min (13:42Z)`: how far, then the clock time. */
export function when(at: string, now: number = nowMs()): string {
  return `${left(at, now)} (${clock(at, now)})`;
}

function plural(n: number, word: string): string {
  return `${n} ${n === 1 ? word : word + "s"}`;
}

const AUTO_REASON = "auto: reserved on first edit (coordd)";

function reasonText(reason: unknown): string {
  if (typeof reason !== "string" || reason === "") return "";
  return reason === AUTO_REASON ? "reserved on first edit" : reason;
}

function slotFull(name: string, holders: Row[], now: number): string {
  const first = holders[0] as Row;
  const capacity = (first.capacity as number | undefined) ?? holders.length;
  const more = holders.length > 1 ? ` (and ${holders.length - 1} more)` : "";
  return (
    `slot ${name} is full (${holders.length} of ${capacity}): held by ${String(first.agent)},` +
    ` lease ending ${when(String(first.expires_at), now)}${more};` +
    " call acquireSlot again with wait_s to wait for it, or do other work first"
  );
}

function reserved(conflicts: Row[], now: number): string {
  const first = (conflicts[0] as Row).reservation as Row;
  const others = new Set(conflicts.map((c) => (c.reservation as Row).id)).size - 1;
  const more = others ? ` (and ${plural(others, "other reservation")})` : "";
  const task = first.task_id != null ? ` for task #${String(first.task_id)}` : "";
  const why = reasonText(first.reason);
  const mine = String((conflicts[0] as Row).pattern);
  const theirs = String(first.pattern);
  const overlap = mine === theirs ? "is" : `overlaps ${theirs},`;
  return (
    `${mine} ${overlap} held by ${String(first.agent)}${task}${why ? ` (${why})` : ""},` +
    ` ending ${when(String(first.expires_at), now)}${more}; work on other files,` +
    " call reserve again with wait_s to wait for it," +
    ` or ask ${String(first.agent)} to hand it over: requestRelease({ patterns: ${JSON.stringify([theirs])} })`
  );
}

function landingTurn(id: number, ahead: Row[]): string {
  const first = ahead[0] as Row;
  const more = ahead.length > 1 ? ` and ${ahead.length - 1} more` : "";
  return (
    `landing #${id} is queued behind #${String(first.id)} (${String(first.branch)} of` +
    ` ${String(first.agent)})${more}; call startLanding again with wait_s to wait for your turn`
  );
}

/** A refusal with structure said anew, with what to do next; undefined for any other. */
export function explain(kind: string, data: Data, now: number = nowMs()): string | undefined {
  const holders = data.holders;
  if (kind === "conflict" && data.slot && Array.isArray(holders) && holders.length && data.retry_at) {
    return slotFull(String(data.slot), holders as Row[], now);
  }
  const conflicts = data.conflicts;
  if (kind === "reserved" && Array.isArray(conflicts) && conflicts.length) {
    return reserved(conflicts as Row[], now);
  }
  const landing = data.landing as Row | undefined;
  const ahead = data.ahead;
  if (kind === "conflict" && landing && typeof landing === "object" && Array.isArray(ahead) && ahead.length) {
    return landingTurn(Number(landing.id), ahead as Row[]);
  }
  return undefined;
}

/** A refusal as this client says it: `explain`'s words, else the daemon's with the wire field it names said as a parameter. */
export function refusal(kind: string, message: string, data: Data, now: number = nowMs()): string {
  return explain(kind, data, now) ?? message.replace("(`wait_s`)", "(the `wait_s` parameter)");
}

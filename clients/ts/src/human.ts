/**
 * The one rule for the human's agent name (issue 47 item 1), as `coordd_client/human.py`
 * has it: the person at this machine acts as `human-<user>` on every human surface
 * (their shells, `coord top`, `coord web`), and an agent that wants a person to approve
 * or answer something names them `human`: an assignee (`post`, `assign`, `release` with
 * an assignee: an approval gate) or a recipient (`sendMessage`, `requestRelease`). This
 * client turns that word into this user's name before it is sent, as the Python clients
 * do, so a gate posted from a VS Code or Cursor extension lands in the same "waiting for
 * you" list as one posted with `coord post --to human`.
 */

import os from "node:os";

/** The assignee or recipient word that means "the person at this machine". */
export const HUMAN = "human";
/** The prefix every human's name has. */
export const HUMAN_PREFIX = `${HUMAN}-`;

/** `human-<user>`, the user read as Python's `getpass.getuser` reads it. */
export function humanAgent(env: NodeJS.ProcessEnv = process.env): string {
  const user = ["LOGNAME", "USER", "LNAME", "USERNAME"].map((k) => env[k]).find((v) => v) ?? loginName();
  return `${HUMAN_PREFIX}${user.replace(/[\u0000-\u001f\u007f]/g, "")}`;
}

/** The login name from the password database; "user" where there is none (a uid with no entry). */
function loginName(): string {
  try {
    return os.userInfo().username;
  } catch {
    return "user";
  }
}

/** Whether `agent` is a person's name by this rule (any user's). */
export function isHuman(agent: string): boolean {
  return agent.startsWith(HUMAN_PREFIX);
}

/** The field that names an assignee or a recipient, per method (Python's `methods._to`). */
const NAMED: Readonly<Record<string, string>> = {
  "task.post": "assignee",
  "task.release": "assignee",
  "task.assign": "assignee",
  "message.send": "to",
  "request.release": "to",
};

/** `params` as sent: `human` in the method's assignee or recipient field becomes `human-<user>`. */
export function resolveHuman(method: string, params: object | undefined, env: NodeJS.ProcessEnv = process.env): object | undefined {
  const field = NAMED[method];
  if (field === undefined || params === undefined || (params as Record<string, unknown>)[field] !== HUMAN) return params;
  return { ...params, [field]: humanAgent(env) };
}

/** The socket's path, resolved exactly as PROTOCOL.md section 1 orders it. */

import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";

import { UntrustedSocket } from "./errors.js";

export const SOCKET_ENV = "COORDD_SOCKET";
export const SOCKET_NAME = "coordd.sock";

/** `sun_path` holds this many bytes (its last is the terminating NUL). */
export function sunPathLimit(platform: NodeJS.Platform = process.platform): number {
  return platform === "linux" ? 107 : 103;
}

export function defaultSocketPath(
  explicit?: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (explicit) return explicit;
  if (env[SOCKET_ENV]) return env[SOCKET_ENV];
  if (env.XDG_RUNTIME_DIR) return path.join(env.XDG_RUNTIME_DIR, "coordd", SOCKET_NAME);
  const tmp = env.TMPDIR || os.tmpdir();
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  return path.join(tmp, `coordd-${uid}`, SOCKET_NAME);
}

/** Refuse a path the kernel cannot bind or connect to, saying what to do instead. */
export function checkSocketPath(socketPath: string, platform: NodeJS.Platform = process.platform): void {
  const bytes = Buffer.byteLength(socketPath);
  const limit = sunPathLimit(platform);
  if (bytes > limit) {
    throw new RangeError(
      `socket path is ${bytes} bytes, over the ${limit}-byte limit of a Unix socket path here: ` +
        `${socketPath}; set $${SOCKET_ENV} to a shorter path`,
    );
  }
}

/**
 * Node cannot read the peer's credentials, so the client checks what it can: the
 * socket must belong to this user (the daemon itself refuses other users' peers).
 */
export async function refuseForeignSocket(socketPath: string): Promise<void> {
  if (typeof process.getuid !== "function") return;
  try {
    const stat = await fs.lstat(socketPath);
    if (stat.uid !== process.getuid()) {
      throw new UntrustedSocket(`${socketPath} belongs to uid ${stat.uid}, not to you: set $COORDD_SOCKET to your own`);
    }
  } catch (error) {
    if (error instanceof UntrustedSocket) throw error;
    // Missing: connect() says so, with how to start a daemon.
  }
}

/** The socket's path, resolved exactly as PROTOCOL.md section 1 orders it. */

import os from "node:os";
import path from "node:path";

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

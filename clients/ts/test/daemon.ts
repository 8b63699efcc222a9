/** A real `coordd serve` on a temporary socket, for the tests. */

import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";

import { CoorddClient } from "../src/index.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** The repository's root (build-test/test -> clients/ts -> repo). */
export const ROOT = path.resolve(HERE, "..", "..", "..", "..");
/** The Python that runs coordd: $COORDD_PYTHON, else the repository's .venv. */
export const PYTHON = process.env.COORDD_PYTHON ?? path.join(ROOT, ".venv", "bin", "python");

export class Daemon {
  readonly dir = mkdtempSync(path.join(os.tmpdir(), "cdts"));
  readonly socketPath = path.join(this.dir, "s.sock");
  readonly dbPath = path.join(this.dir, "db.sqlite");
  private proc: ChildProcess | null = null;

  async start(): Promise<this> {
    this.proc = spawn(PYTHON, ["-m", "coordd", "serve", "--socket", this.socketPath, "--db", this.dbPath,
      "--log-level", "warning"], { stdio: ["ignore", "ignore", "inherit"] });
    // Generous: CI may run on a busy machine, where a Python start-up takes seconds.
    const deadline = Date.now() + 90_000;
    while (!(await this.answers())) {
      if (Date.now() > deadline) throw new Error("coordd did not start");
      if (this.proc.exitCode !== null) throw new Error(`coordd exited with ${this.proc.exitCode}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return this;
  }

  private answers(): Promise<boolean> {
    return new Promise((resolve) => {
      const s = net.createConnection({ path: this.socketPath });
      s.once("connect", () => { s.destroy(); resolve(true); });
      s.once("error", () => resolve(false));
    });
  }

  /** Graceful stop (SIGTERM), waiting for the process to exit. */
  async stop(): Promise<void> {
    const proc = this.proc;
    if (proc === null || proc.exitCode !== null) return;
    await new Promise<void>((resolve) => { proc.once("exit", () => resolve()); proc.kill("SIGTERM"); });
    this.proc = null;
  }

  /** SIGKILL, as a crash: no drain, no checkpoint; `start` brings it back on the same file. */
  async kill(): Promise<void> {
    const proc = this.proc;
    if (proc === null || proc.exitCode !== null) return;
    await new Promise<void>((resolve) => { proc.once("exit", () => resolve()); proc.kill("SIGKILL"); });
    this.proc = null;
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** One daemon and one connected client shared by a test file's tests: `before` starts
 * them, `after` ends them; read `board.client` and `board.daemon` inside a test. */
export interface Board {
  readonly daemon: Daemon;
  readonly client: CoorddClient;
}

export function shareBoard(): Board {
  let daemon: Daemon | undefined;
  let client: CoorddClient | undefined;
  before(async () => {
    daemon = new Daemon(); // assigned before it starts: after() stops one that failed to
    await daemon.start();
    client = await CoorddClient.connect({ socketPath: daemon.socketPath });
  });
  after(async () => {
    client?.close();
    await daemon?.destroy();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the board is read before its before() hook ran");
    return value;
  };
  return {
    get daemon() { return started(daemon); },
    get client() { return started(client); },
  };
}

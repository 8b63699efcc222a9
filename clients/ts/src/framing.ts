/**
 * PROTOCOL.md section 2: every message is one frame, a 4-byte big-endian length
 * and that many bytes of UTF-8 JSON. Pure (no sockets), so it is tested on its own.
 */

/** The daemon's default maximum payload (`coordd serve --max-frame`). */
export const DEFAULT_MAX_FRAME = 1024 * 1024;
/** Answers can be larger than requests (1,000 tasks of 64 KiB bodies). */
export const MAX_ANSWER_FRAME = 64 * 1024 * 1024;

export class FrameError extends Error {
  override name = "FrameError";
}

/** One frame around `payload`; refuses what the daemon would refuse to read. */
export function encodeFrame(payload: Uint8Array, maxFrame = DEFAULT_MAX_FRAME): Buffer {
  if (payload.length === 0) {
    throw new FrameError("a frame must not be empty");
  }
  if (payload.length > maxFrame) {
    throw new FrameError(`payload of ${payload.length} bytes exceeds the ${maxFrame}-byte frame limit`);
  }
  const frame = Buffer.allocUnsafe(4 + payload.length);
  frame.writeUInt32BE(payload.length, 0);
  frame.set(payload, 4);
  return frame;
}

/**
 * Fed arbitrary chunks, yields whole frames. A length of 0, or one over the
 * limit, is rejected as soon as its 4 bytes arrive: nothing is buffered for it.
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;

  constructor(private readonly maxFrame = MAX_ANSWER_FRAME) {}

  /** Add bytes; return every frame they complete, in order. */
  push(chunk: Uint8Array): Buffer[] {
    if (chunk.length > 0) {
      this.chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
      this.buffered += chunk.length;
    }
    const frames: Buffer[] = [];
    for (;;) {
      if (this.buffered < 4) return frames;
      const head = this.peek(4);
      const length = head.readUInt32BE(0);
      if (length === 0) throw new FrameError("a frame of length 0 is invalid");
      if (length > this.maxFrame) {
        throw new FrameError(`a frame of ${length} bytes exceeds the ${this.maxFrame}-byte limit`);
      }
      if (this.buffered < 4 + length) return frames;
      const whole = this.take(4 + length);
      frames.push(whole.subarray(4));
    }
  }

  /** Bytes of a frame begun but not finished (a peer that closes now leaves them). */
  get pending(): number {
    return this.buffered;
  }

  private peek(n: number): Buffer {
    const first = this.chunks[0];
    if (first !== undefined && first.length >= n) return first.subarray(0, n);
    return Buffer.concat(this.chunks, this.buffered).subarray(0, n);
  }

  private take(n: number): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.buffered);
    const out = Buffer.from(all.subarray(0, n));
    const rest = all.subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
    return out;
  }
}

/**
 * Collects one output stream up to a byte cap. Everything past the cap is counted and
 * dropped (the pipe keeps being drained so the writer never blocks); the last `tailBytes`
 * bytes are always kept so a trailer written at the very end can be found.
 */
export interface OutputCollector {
  push(chunk: Buffer): void;
  /** Bytes seen in total, kept or not. */
  readonly totalBytes: number;
  readonly truncated: boolean;
  /** The kept bytes (at most the cap). */
  head(): Buffer;
  /** The last bytes seen (at most `tailBytes`). */
  tail(): Buffer;
}

/** A collector keeping the first `maxBytes` bytes and the last `tailBytes` bytes. */
export function createOutputCollector(maxBytes: number, tailBytes = 0): OutputCollector {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let total = 0;
  let tail: Buffer = Buffer.alloc(0);
  return {
    push(chunk) {
      total += chunk.length;
      if (keptBytes < maxBytes) {
        const piece = chunk.length <= maxBytes - keptBytes ? chunk : chunk.subarray(0, maxBytes - keptBytes);
        kept.push(piece);
        keptBytes += piece.length;
      }
      if (tailBytes > 0) {
        tail = chunk.length >= tailBytes ? chunk.subarray(chunk.length - tailBytes) : Buffer.concat([tail, chunk]);
        if (tail.length > tailBytes) tail = tail.subarray(tail.length - tailBytes);
      }
    },
    get totalBytes() {
      return total;
    },
    get truncated() {
      return total > maxBytes;
    },
    head: () => Buffer.concat(kept),
    tail: () => tail,
  };
}

import { closeSync, openSync, writeSync } from 'node:fs';

/** Characters buffered before one write: big enough to amortize the syscall, small enough to stay flat. */
const FLUSH_CHARS = 1 << 20;

/** Appends JSON lines to a new file through a small buffer. */
export interface JsonlWriter {
  /** Buffers `value` as one line; writes when the buffer is full. */
  write(value: unknown): void;
  /** Writes what is buffered and closes the file. */
  close(): void;
}

/** Creates `path` (which must not exist) for JSON lines. */
export function createJsonlWriter(path: string): JsonlWriter {
  const fd = openSync(path, 'wx');
  let pending: string[] = [];
  let size = 0;
  const flush = (): void => {
    if (pending.length === 0) return;
    writeSync(fd, pending.join(''));
    pending = [];
    size = 0;
  };
  return {
    write(value) {
      const line = `${JSON.stringify(value)}\n`;
      pending.push(line);
      size += line.length;
      if (size >= FLUSH_CHARS) flush();
    },
    close() {
      try {
        flush();
      } finally {
        closeSync(fd);
      }
    },
  };
}

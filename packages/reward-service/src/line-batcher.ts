import { createLogger } from '@envgen/core';
import type { LogLevel, Logger } from '@envgen/core';

/** Lines gathered and written together. */
export interface LineBatcher {
  /** Queues one line (without its newline). */
  write(line: string): void;
  /** Writes what is queued now. */
  flush(): void;
}

/**
 * Gathers the lines written during one turn of the event loop and hands them to `sink` as
 * one string on the next turn (or at once past `maxBytes`). Under load a server answers
 * many requests per turn, so their log lines cost one write instead of one each; when idle
 * a line still goes out on the next turn.
 */
export function createLineBatcher(sink: (text: string) => void, options: { maxBytes?: number } = {}): LineBatcher {
  const maxBytes = options.maxBytes ?? 64 * 1024;
  let queued = '';
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (queued === '') return;
    const text = queued;
    queued = '';
    sink(text);
  };
  return {
    write(line) {
      queued += `${line}\n`;
      if (queued.length >= maxBytes) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}

/** A logger whose lines wait for the next event-loop turn; `flush` writes them now. */
export type ServiceLogger = Logger & { flush(): void };

/** The service's logger: JSON lines, batched per event-loop turn into `sink` (the apps pass stderr; they flush before returning). */
export function createServiceLogger(sink: (text: string) => void, level: LogLevel = 'info'): ServiceLogger {
  const lines = createLineBatcher(sink);
  return Object.assign(createLogger({ level, format: 'json', write: lines.write }), { flush: lines.flush });
}

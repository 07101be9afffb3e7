/** Structured fields attached to a log line (job id, instance id, timings...). */
export type LogFields = Record<string, unknown>;

/**
 * What packages log through. Packages never write to the console themselves: the app
 * passes a logger in (human lines for the CLI, JSON lines for services).
 */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export interface LoggerOptions {
  level?: LogLevel;
  /** `human`: `level message key=value`; `json`: one JSON object per line. */
  format?: 'human' | 'json';
  /** Where lines go; defaults to stderr so stdout stays clean for `--json` output. */
  write?: (line: string) => void;
  fields?: LogFields;
}

/** A logger writing human or JSON lines. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const threshold = LEVELS[options.level ?? 'info'];
  const format = options.format ?? 'human';
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const base = options.fields ?? {};

  const emit = (level: Exclude<LogLevel, 'silent'>, message: string, fields?: LogFields): void => {
    if (LEVELS[level] < threshold) return;
    const all = { ...base, ...fields };
    if (format === 'json') {
      write(JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...all }));
      return;
    }
    const extras = Object.entries(all)
      .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
      .join(' ');
    write(`${level === 'info' ? '' : `${level}: `}${message}${extras ? ` ${extras}` : ''}`);
  };

  return {
    debug: (message, fields) => emit('debug', message, fields),
    info: (message, fields) => emit('info', message, fields),
    warn: (message, fields) => emit('warn', message, fields),
    error: (message, fields) => emit('error', message, fields),
    child: (fields) => createLogger({ ...options, fields: { ...base, ...fields } }),
  };
}

/** A logger that drops everything; the default inside packages and tests. */
export const silentLogger: Logger = createLogger({ level: 'silent' });

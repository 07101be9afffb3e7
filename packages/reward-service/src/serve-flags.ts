import { EnvgenError } from '@envgen/core';
import type { IsSolvedOptions, SolveLevel } from '@envgen/rewards';
import { DEFAULT_REWARD_PORT } from './http-server.js';

/** The scores `--solved-by` accepts. */
export const SOLVE_LEVELS: readonly SolveLevel[] = ['entity', 'module', 'file', 'total'];

/** The serve flags as typed on a command line (every binary that starts the server takes these). */
export interface ServeFlags {
  host?: string;
  port?: string;
  token?: string;
  solvedBy?: string;
  solvedThreshold?: string;
}

/** The validated serve flags. */
export interface ServeSettings {
  host: string;
  port: number;
  /** Absent: no authentication. */
  token?: string;
  solve: Required<IsSolvedOptions>;
}

function usage(message: string): EnvgenError {
  return new EnvgenError('usage', message);
}

/**
 * Validates `--solved-by` and `--solved-threshold` (default: solved when entity F1 is 1).
 * Throws a `usage` error naming the flag at fault.
 */
export function readSolveFlags(flags: Pick<ServeFlags, 'solvedBy' | 'solvedThreshold'>): Required<IsSolvedOptions> {
  const by = (flags.solvedBy ?? 'entity') as SolveLevel;
  if (!SOLVE_LEVELS.includes(by)) throw usage(`--solved-by ${flags.solvedBy} is not a score; pass one of ${SOLVE_LEVELS.join(', ')}`);
  const max = by === 'total' ? 3 : 1;
  let threshold = max;
  if (flags.solvedThreshold !== undefined) {
    threshold = Number(flags.solvedThreshold);
    if (flags.solvedThreshold.trim() === '' || !Number.isFinite(threshold) || threshold <= 0 || threshold > max) {
      throw usage(`--solved-threshold ${flags.solvedThreshold} is out of range for ${by}; pass a number in (0, ${max}]`);
    }
  }
  return { by, threshold };
}

/**
 * Validates the serve flags; the token falls back to `ENVGEN_SERVE_TOKEN` in `env` (an
 * empty variable means none). Throws a `usage` error naming the flag at fault.
 */
export function readServeFlags(flags: ServeFlags, env: Record<string, string | undefined>): ServeSettings {
  const host = flags.host ?? '127.0.0.1';
  if (host.trim() === '') throw usage('--host is empty; pass an address such as 127.0.0.1 or 0.0.0.0');

  let port = DEFAULT_REWARD_PORT;
  if (flags.port !== undefined) {
    port = Number(flags.port);
    if (!/^\d+$/.test(flags.port) || port > 65_535) throw usage(`--port ${flags.port} is not a port number; pass 0-65535 (0 picks a free port)`);
  }

  let token = flags.token;
  if (token !== undefined && token.trim() === '') throw usage('--token is empty; pass a secret, or leave --token out to serve without one');
  if (token === undefined && env['ENVGEN_SERVE_TOKEN']) token = env['ENVGEN_SERVE_TOKEN'];

  return { host, port, ...(token === undefined ? {} : { token }), solve: readSolveFlags(flags) };
}

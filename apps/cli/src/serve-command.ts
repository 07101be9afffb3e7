import type { Settings } from '@envgen/config';
import type { Logger } from '@envgen/core';
import { DEFAULT_REWARD_PORT, closeOnSignals, startRewardServer } from '@envgen/reward-service';
import type { RewardServer, ServeSettings } from '@envgen/reward-service';
import { renderReport } from '@envgen/report';
import { gatherReport } from './report-command.js';

export { SOLVE_LEVELS, createServiceLogger, readServeFlags, readSolveFlags } from '@envgen/reward-service';
export type { ServeFlags } from '@envgen/reward-service';

/** The port `envgen serve` listens on by default. */
export const DEFAULT_SERVE_PORT = DEFAULT_REWARD_PORT;

/** Options of `envgen serve`: the validated flags (see readServeFlags). */
export interface ServeOptions extends ServeSettings {
  /** Close the server on SIGINT and SIGTERM (default true; tests pass false). */
  handleSignals?: boolean;
}

/**
 * `envgen serve`: starts the reward service on the pool under `settings.home`, with the pool
 * report at `/report`, and, unless told not to, closes it gracefully on SIGINT/SIGTERM.
 * Resolves once it listens; await the returned server's `closed` to wait for the shutdown.
 */
export async function runServe(options: ServeOptions, settings: Settings, logger: Logger): Promise<RewardServer> {
  const { handleSignals = true, ...serve } = options;
  // The report is rendered per request, so a reload shows the pool as it is now.
  const pages = { '/report': async () => renderReport(await gatherReport(settings, logger)) };
  const server = await startRewardServer({ home: settings.home, ...serve, logger, pages });
  if (handleSignals) closeOnSignals(server, { logger });
  return server;
}

import type { Settings } from '@envgen/config';
import type { Logger } from '@envgen/core';
import { startWorker } from '@envgen/grow';
import type { QueueConnection } from '@envgen/grow';
import { createGrowServices } from './grow-services.js';
import type { StopSignal } from './grow-command.js';

/** Options of `envgen worker`. */
export interface WorkerOptions {
  redis: QueueConnection;
  concurrency?: number;
  lockSeconds?: number;
}

/**
 * `envgen worker`: takes growth jobs (inject shards, tasks, rollouts) from BullMQ with this
 * process's home, until stopped. The first stop finishes the active jobs; `force` (a second
 * signal) hands them back at once (another worker re-runs them after the lock expires).
 */
export async function runWorker(options: WorkerOptions, settings: Settings, logger: Logger, env: Record<string, string | undefined>, stop: StopSignal, force: Promise<void>): Promise<void> {
  const worker = startWorker({
    connection: options.redis,
    services: createGrowServices(settings, logger, env),
    logger,
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
    ...(options.lockSeconds === undefined ? {} : { lockDurationMs: options.lockSeconds * 1000 }),
  });
  await worker.waitUntilReady();
  logger.info(`worker on ${options.redis.url} (home ${settings.home}, ${options.concurrency ?? 1} job(s) at once); Ctrl-C finishes the active jobs, twice hands them back`);
  await stop.stopped;
  await Promise.race([worker.close(), force.then(() => worker.close(true))]);
}

import { setTimeout as sleep } from 'node:timers/promises';
import type { Settings } from '@envgen/config';
import type { Logger } from '@envgen/core';
import { countJobs, enqueueRound, nextRunAt, planRound, runRoundInProcess, scheduleRounds, startHost, startWorker, waitForRound } from '@envgen/grow';
import type { GrowServices, QueueConnection, RoundEvent, RoundTemplate, SolverSpec } from '@envgen/grow';
import { selectStrategies } from '@envgen/mutate';
import { BANDS, openPool } from '@envgen/pool';
import type { GrowthRound, Pool } from '@envgen/pool';
import { createGrowServices } from './grow-services.js';
import type { StageProgress } from './progress.js';
import { formatTable } from './pool-command.js';

/** Options of `envgen grow`. */
export interface GrowOptions {
  /** One round now, or rounds on this cron schedule until stopped. */
  every?: string;
  budget: number;
  rollouts: number;
  minAttempts?: number;
  /** Default: the number of rounds stored so far (round n of a pool always gets seed n). */
  seed?: number;
  revisit?: number;
  strategies?: string[];
  solver: SolverSpec;
  explore?: number;
  shardCandidates?: number;
  /** Tries per job (default 3). */
  attempts?: number;
  /** BullMQ on this Redis; absent: every job in this process. */
  redis?: QueueConnection;
  /** With --redis: jobs this process works on itself besides hosting the pool (default 1; 0 leaves them to `envgen worker`s). */
  localWorkers?: number;
  /** Seconds a job's lock lasts (BullMQ; a killed worker's job runs again after about this long). */
  lockSeconds?: number;
}

/** Ends a long-running command: resolves on SIGINT or SIGTERM (or the given signal). */
export interface StopSignal {
  stopped: Promise<void>;
  isStopped: () => boolean;
}

/** SIGINT/SIGTERM as a stop signal for a long-running command; a second one is `force`. */
export function listenForStop(): { stop: StopSignal; force: Promise<void>; dispose: () => void } {
  let signals = 0;
  let onStop: () => void = () => undefined;
  let onForce: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    onStop = resolve;
  });
  const force = new Promise<void>((resolve) => {
    onForce = resolve;
  });
  const handler = () => {
    signals += 1;
    if (signals === 1) onStop();
    else onForce();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    stop: { stopped, isStopped: () => signals > 0 },
    force,
    dispose: () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}

/** The strategies whose arms a round splits its budget over (default: every procedural and removal strategy). */
function armStrategies(names: readonly string[] | undefined): string[] {
  return (names === undefined ? selectStrategies() : selectStrategies(names)).map((strategy) => strategy.name);
}

function template(options: GrowOptions): RoundTemplate {
  return {
    budget: options.budget,
    rollouts: options.rollouts,
    strategies: armStrategies(options.strategies),
    solver: options.solver,
    ...(options.minAttempts === undefined ? {} : { minAttempts: options.minAttempts }),
    ...(options.revisit === undefined ? {} : { revisit: options.revisit }),
    ...(options.explore === undefined ? {} : { explore: options.explore }),
    ...(options.shardCandidates === undefined ? {} : { shardCandidates: options.shardCandidates }),
  };
}

function roundIdFor(seed: number): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-s${seed}`;
}

function planNow(pool: Pool, options: GrowOptions) {
  const seed = options.seed ?? pool.listRounds().length;
  return planRound(pool, { ...template(options), roundId: roundIdFor(seed), seed });
}

/** One round in this process, with a live bar per stage. */
async function growInProcess(pool: Pool, services: GrowServices, options: GrowOptions, logger: Logger, progress: StageProgress): Promise<GrowthRound> {
  const plan = planNow(pool, options);
  progress.start(countJobs(plan));
  try {
    return await runRoundInProcess(plan, { pool, services, logger, attempts: options.attempts ?? 3, onEvent: (event: RoundEvent) => progress.update(event) });
  } finally {
    progress.stop();
  }
}

/**
 * `envgen grow`: growth rounds. Without Redis every job runs in this process; with it, this
 * process hosts the pool (plans rounds, writes their results) and jobs go to BullMQ workers.
 * `onRound` receives each finished round; returns when `--once`'s round ends or `stop` fires.
 */
export async function runGrow(
  options: GrowOptions,
  settings: Settings,
  logger: Logger,
  progress: StageProgress,
  env: Record<string, string | undefined>,
  stop: StopSignal,
  onRound: (round: GrowthRound) => void,
): Promise<GrowthRound[]> {
  if (options.every !== undefined) nextRunAt(options.every);
  const pool = openPool(settings.home, { logger });
  const services = createGrowServices(settings, logger, env);
  const rounds: GrowthRound[] = [];
  const finished = (round: GrowthRound) => {
    rounds.push(round);
    onRound(round);
  };
  try {
    if (options.redis === undefined) {
      if (options.every === undefined) {
        finished(await growInProcess(pool, services, options, logger, progress));
        return rounds;
      }
      for (;;) {
        const next = nextRunAt(options.every);
        logger.info(`next round at ${next.toISOString()}`);
        await Promise.race([sleep(Math.max(0, next.getTime() - Date.now())), stop.stopped]);
        if (stop.isStopped()) return rounds;
        finished(await growInProcess(pool, services, options, logger, progress));
      }
    }
    return await growOnQueue(pool, services, options, logger, stop, finished);
  } finally {
    pool.close();
  }
}

async function growOnQueue(pool: Pool, services: GrowServices, options: GrowOptions, logger: Logger, stop: StopSignal, finished: (round: GrowthRound) => void): Promise<GrowthRound[]> {
  const connection = options.redis as QueueConnection;
  const lockDurationMs = (options.lockSeconds ?? 30) * 1000;
  const retry = { attempts: options.attempts ?? 3 };
  const rounds: GrowthRound[] = [];
  const host = startHost({
    connection,
    pool,
    services,
    logger,
    lockDurationMs,
    onRound: (round) => {
      rounds.push(round);
      finished(round);
    },
  });
  const workers = Array.from({ length: options.localWorkers ?? 1 }, () => startWorker({ connection, services, logger, lockDurationMs }));
  try {
    if (options.every === undefined) {
      const plan = planNow(pool, options);
      const planned = plan.round.roundId;
      await enqueueRound(plan, pool, connection, retry);
      logger.info(`round ${planned} queued: ${plan.repos.reduce((sum, work) => sum + work.shards.length, 0)} inject shard(s) over ${plan.repos.length} repo(s)`);
      await waitForRound(connection, planned, stop.stopped);
      // Another pool host on these queues may have written it: the pool holds the result.
      const written = pool.getRound(planned);
      if (!rounds.some((round) => round.roundId === planned) && written !== undefined && written.status !== 'running') {
        rounds.push(written);
        finished(written);
      }
    } else {
      await scheduleRounds(connection, options.every, template(options), retry);
      logger.info(`rounds scheduled at "${options.every}" on ${connection.url}; Ctrl-C stops this host (the schedule stays in Redis)`);
      await stop.stopped;
    }
    return rounds;
  } finally {
    await Promise.all([host.close(), ...workers.map((worker) => worker.close())]);
  }
}

function percent(part: number, whole: number): string {
  return whole === 0 ? '–' : `${Math.round((100 * part) / whole)}%`;
}

/** The human form of a round: its plan and results per arm, then per repo and overall. */
export function formatRound(round: GrowthRound): string {
  const results = new Map(round.arms.map((arm) => [`${arm.repo}\u0000${arm.strategy}`, arm]));
  const rows = round.plan
    .filter((entry) => entry.candidates > 0 || results.has(`${entry.repo}\u0000${entry.strategy}`))
    .map((entry) => {
      const arm = results.get(`${entry.repo}\u0000${entry.strategy}`);
      return [
        entry.repo,
        entry.strategy,
        String(entry.candidates),
        arm === undefined ? '–' : String(arm.candidates),
        arm === undefined ? '–' : String(arm.kept),
        arm === undefined ? '–' : percent(arm.kept + arm.known, arm.candidates),
        entry.reason,
      ];
    });
  const repoLines = round.repos.map(
    (repo) =>
      `  ${repo.repo}: ${repo.newInstances} new, ${repo.tasksBuilt} task(s), ${repo.rollouts} rollout(s), inject ${repo.injectSeconds.toFixed(1)} s${repo.failed === null ? '' : `; FAILED: ${repo.failed}`}`,
  );
  return [
    `round ${round.roundId} (seed ${round.seed}, ${round.status}): budget ${round.budget} candidates, ${round.rollouts} ${round.solver} rollout(s) per instance`,
    '',
    formatTable(['repo', 'strategy', 'planned', 'tried', 'new', 'yield', 'why'], rows, new Set([2, 3, 4, 5])),
    '',
    ...repoLines,
    `new          ${round.newInstances} instance(s): ${BANDS.map((band) => `${band} ${round.bands[band]}`).join(', ')} (after ${round.minAttempts} attempt(s))`,
    `revisited    ${round.revisited} earlier instance(s); ${round.rolloutsRun} rollout(s)${round.duplicateOutcomes > 0 ? `, ${round.duplicateOutcomes} delivered twice (written once)` : ''}${round.tokens > 0 ? `, ${round.tokens} tokens` : ''}`,
    `time         ${round.seconds.toFixed(1)} s; ${round.secondsPerKept === null ? '–' : `${round.secondsPerKept.toFixed(2)} s`} per new instance`,
  ].join('\n');
}

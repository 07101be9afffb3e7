import { FlowProducer, Queue, QueueEvents, UnrecoverableError, Worker } from 'bullmq';
import type { ConnectionOptions, FlowJob, Job, JobsOptions } from 'bullmq';
import { createRng, isEnvgenError, silentLogger } from '@envgen/core';
import type { Logger } from '@envgen/core';
import type { GrowthRound, Pool } from '@envgen/pool';
import { finishRound } from './finish-round.js';
import type { RepoOutcome } from './finish-round.js';
import { planRound } from './plan-round.js';
import type { PlanRoundOptions, RoundPlan } from './plan-round.js';
import { processInject, processRollouts, processTasks } from './round-jobs.js';
import type { GrowJobData, GrowServices, InjectResult, RolloutsResult, RoundJobData, TasksResult } from './round-jobs.js';

/** The queue of a round's work: inject shards, tasks, rollouts; any worker takes them. */
export const JOBS_QUEUE = 'envgen-jobs';
/** The pool host's queue: scheduled round starts and the rounds themselves (the writer). */
export const HOST_QUEUE = 'envgen-host';
/** The job scheduler's id: one schedule however many processes register it. */
export const SCHEDULER_ID = 'envgen-grow';

/** Where the queues live. */
export interface QueueConnection {
  /** `redis://host:port[/db]`. */
  url: string;
  /** Key prefix of every queue (default `envgen`): tests and separate deployments use their own. */
  prefix?: string;
}

/** How a round's jobs are retried: tries per job and the first backoff (doubling). */
export interface RetryOptions {
  attempts?: number;
  backoffMs?: number;
}

/** A scheduled round's settings: everything of a plan but its id and seed, which come from the schedule slot. */
export type RoundTemplate = Omit<PlanRoundOptions, 'roundId' | 'seed'>;

interface RoundStartData {
  kind: 'round-start';
  template: RoundTemplate;
  retry: RetryOptions;
}

interface HostRoundData extends RoundJobData {
  /** The rollouts job id of each repo, to name a repo whose jobs failed. */
  repos: Record<string, { repo: string; spec: string }>;
}

type HostJobData = HostRoundData | RoundStartData;

function connectionOf(connection: QueueConnection): { connection: ConnectionOptions; prefix: string } {
  // Workers block on Redis: ioredis must retry forever rather than fail a command.
  return { connection: { url: connection.url, maxRetriesPerRequest: null }, prefix: connection.prefix ?? 'envgen' };
}

/** Job ids may not hold ':'; `owner/name` becomes `owner__name`. */
function idPart(text: string): string {
  return text.replace(/[^A-Za-z0-9_.-]/g, '_').replace(/_+/g, '_');
}

function repoKey(repo: string): string {
  return idPart(repo.replace('/', '__'));
}

/** The flow of a planned round: round (host) ← per repo rollouts ← tasks ← inject shards. */
export function roundFlow(plan: RoundPlan, retry: RetryOptions = {}): FlowJob {
  const { roundId } = plan.round;
  const child: JobsOptions = {
    attempts: retry.attempts ?? 3,
    backoff: { type: 'exponential', delay: retry.backoffMs ?? 5_000 },
    // A repo whose jobs keep failing never blocks the round: its failure goes up with its reason.
    ignoreDependencyOnFailure: true,
  };
  const repos: HostRoundData['repos'] = {};
  const children: FlowJob[] = plan.repos.map((work) => {
    const base = `${idPart(roundId)}.${repoKey(work.repo)}`;
    repos[`${base}.rollouts`] = { repo: work.repo, spec: work.spec };
    const common = { roundId, repo: work.repo, spec: work.spec };
    return {
      name: 'rollouts',
      queueName: JOBS_QUEUE,
      data: { kind: 'rollouts', ...common, rollouts: plan.round.rollouts, solver: plan.solver, revisit: work.revisit } satisfies GrowJobData,
      opts: { ...child, jobId: `${base}.rollouts` },
      children: [
        {
          name: 'tasks',
          queueName: JOBS_QUEUE,
          data: { kind: 'tasks', ...common } satisfies GrowJobData,
          opts: { ...child, jobId: `${base}.tasks` },
          children: work.shards.map(({ shard, quotas }) => ({
            name: 'inject',
            queueName: JOBS_QUEUE,
            data: { kind: 'inject', ...common, shard, seed: plan.round.seed, quotas } satisfies GrowJobData,
            opts: { ...child, jobId: `${base}.inject-${shard}` },
          })),
        },
      ],
    };
  });
  return { name: 'round', queueName: HOST_QUEUE, data: { kind: 'round', round: plan.round, repos } satisfies HostJobData, opts: { jobId: idPart(roundId) }, children };
}

/** Stores the planned round (status `running`) and adds its flow; re-adding a round's flow adds nothing (job ids derive from it). */
export async function enqueueRound(plan: RoundPlan, pool: Pool, connection: QueueConnection, retry: RetryOptions = {}): Promise<void> {
  pool.putRound(plan.round);
  const producer = new FlowProducer(connectionOf(connection));
  try {
    await producer.add(roundFlow(plan, retry));
  } finally {
    await producer.close();
  }
}

/** Bad input fails at once; anything else (a crashed sandbox, a lost connection) is retried. */
async function unrecoverableOnUsage<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isEnvgenError(error) && (error.code === 'usage' || error.code === 'repo-spec-invalid')) throw new UnrecoverableError(error.message);
    throw error;
  }
}

/** Options of {@link startWorker}. */
export interface StartWorkerOptions {
  connection: QueueConnection;
  services: GrowServices;
  /** Jobs at once (default 1). */
  concurrency?: number;
  /** How long a job's lock lasts without renewal (ms, default 30 000): a killed worker's job runs again after about this long. */
  lockDurationMs?: number;
  logger?: Logger;
}

/** A worker of the jobs queue: inject shards, tasks and rollouts of any round, with this process's services. */
export function startWorker(options: StartWorkerOptions): Worker<GrowJobData> {
  const logger = options.logger ?? silentLogger;
  const lockDuration = options.lockDurationMs ?? 30_000;
  const worker = new Worker<GrowJobData>(
    JOBS_QUEUE,
    (job: Job<GrowJobData>) =>
      unrecoverableOnUsage(async () => {
        const data = job.data;
        logger.info(`job ${job.id}: ${data.kind} ${data.repo} (try ${job.attemptsMade + 1})`, { job: job.id ?? '', round: data.roundId });
        if (data.kind === 'inject') return processInject(data, options.services);
        const failures = Object.values(await job.getIgnoredChildrenFailures());
        if (data.kind === 'tasks') return processTasks(data, Object.values(await job.getChildrenValues<InjectResult>()), failures, options.services);
        const [tasks] = Object.values(await job.getChildrenValues<TasksResult>());
        return processRollouts(data, tasks, failures, options.services);
      }),
    { ...connectionOf(options.connection), concurrency: options.concurrency ?? 1, lockDuration, stalledInterval: lockDuration, maxStalledCount: 3 },
  );
  worker.on('failed', (job, error) => logger.warn(`job ${job?.id ?? '?'} failed: ${error.message}`, { job: job?.id ?? '' }));
  return reportConnectionErrors(worker, logger);
}

/**
 * A BullMQ worker emits `error` when its Redis connection drops; with no listener Node throws
 * it, which kills the process (or, in a host that catches it, leaves the worker's loop
 * stopped). Listening keeps it running while ioredis reconnects; the message is logged
 * once per outage, not once per reconnect attempt.
 */
function reportConnectionErrors<T extends Worker>(worker: T, logger: Logger): T {
  let last = '';
  worker.on('error', (error) => {
    if (error.message === last) return;
    last = error.message;
    logger.warn(`queue connection: ${error.message}; retrying`);
  });
  worker.on('ready', () => {
    last = '';
  });
  return worker;
}

/** Options of {@link startHost}. */
export interface StartHostOptions {
  connection: QueueConnection;
  pool: Pool;
  services: GrowServices;
  logger?: Logger;
  lockDurationMs?: number;
  onRound?: (round: GrowthRound) => void;
}

/** The seed and id of a scheduled round, from its schedule slot. */
function scheduledRound(job: Job): { roundId: string; seed: number } {
  const at = new Date(job.timestamp).toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return { roundId: `${at}-scheduled`, seed: createRng(String(job.id)).int(2 ** 31) };
}

/**
 * The pool host's worker (run it in one process): starts scheduled rounds (plan from the
 * pool, then the flow) and finishes rounds (the writer stores every result, idempotently).
 */
export function startHost(options: StartHostOptions): Worker<HostJobData> {
  const logger = options.logger ?? silentLogger;
  const lockDuration = options.lockDurationMs ?? 30_000;
  const host = new Worker<HostJobData>(
    HOST_QUEUE,
    async (job: Job<HostJobData>) => {
      const data = job.data;
      if (data.kind === 'round-start') {
        const plan = planRound(options.pool, { ...data.template, ...scheduledRound(job) });
        await enqueueRound(plan, options.pool, options.connection, data.retry);
        logger.info(`round ${plan.round.roundId} started: ${plan.round.budget} candidates over ${plan.round.plan.length} arm(s)`);
        return plan.round.roundId;
      }
      const values = await job.getChildrenValues<RolloutsResult>();
      const failures = await job.getIgnoredChildrenFailures();
      const outcomes: RepoOutcome[] = Object.entries(data.repos).map(([jobId, { repo, spec }]) => {
        const key = (map: Record<string, unknown>) => Object.keys(map).find((entry) => entry.endsWith(`:${jobId}`));
        const valueKey = key(values);
        const failureKey = key(failures);
        return { repo, spec, result: valueKey === undefined ? null : (values[valueKey] ?? null), failure: failureKey === undefined ? null : (failures[failureKey] ?? null) };
      });
      const round = await finishRound(data.round, outcomes, options.pool, options.services, logger);
      options.onRound?.(round);
      return { roundId: round.roundId, newInstances: round.newInstances };
    },
    { ...connectionOf(options.connection), concurrency: 1, lockDuration, stalledInterval: lockDuration, maxStalledCount: 3 },
  );
  return reportConnectionErrors(host, logger);
}

/**
 * Resolves when the round's writer job has ended (completed or failed), whichever pool host
 * ran it, or when `stopped` resolves. A `--once` host needs it: another host on the same
 * queues may take the writer job of the round it queued.
 */
export async function waitForRound(connection: QueueConnection, roundId: string, stopped: Promise<void>): Promise<void> {
  const jobId = idPart(roundId);
  const events = new QueueEvents(HOST_QUEUE, connectionOf(connection));
  const queue = new Queue(HOST_QUEUE, connectionOf(connection));
  try {
    const ended = new Promise<void>((resolve) => {
      events.on('completed', (event) => event.jobId === jobId && resolve());
      events.on('failed', (event) => event.jobId === jobId && resolve());
    });
    await events.waitUntilReady();
    // Listening before reading the state: a round that ends in between is seen either way.
    const state = await queue.getJobState(jobId);
    if (state === 'completed' || state === 'failed') return;
    await Promise.race([ended, stopped]);
  } finally {
    await Promise.all([events.close(), queue.close()]);
  }
}

/** Registers (or updates) the one schedule of growth rounds; every process may call it. */
export async function scheduleRounds(connection: QueueConnection, cron: string, template: RoundTemplate, retry: RetryOptions = {}): Promise<void> {
  const queue = new Queue(HOST_QUEUE, connectionOf(connection));
  try {
    await queue.upsertJobScheduler(SCHEDULER_ID, { pattern: cron }, { name: 'round-start', data: { kind: 'round-start', template, retry } satisfies HostJobData });
  } finally {
    await queue.close();
  }
}

/** One job as `envgen queue status` shows it. */
export interface JobSummary {
  queue: string;
  id: string;
  name: string;
  repo: string | null;
  round: string | null;
  attemptsMade: number;
  failedReason: string | null;
}

/** What `envgen queue status` shows. */
export interface QueueStatus {
  counts: Record<string, Record<string, number>>;
  /** Rounds whose jobs are under way. */
  rounds: string[];
  active: JobSummary[];
  failed: JobSummary[];
  schedule: { pattern: string | null; next: string | null } | null;
  workers: number;
}

function summarize(queue: string, job: Job): JobSummary {
  const data = job.data as GrowJobData | HostJobData;
  return {
    queue,
    id: job.id ?? '',
    name: job.name,
    repo: 'repo' in data ? data.repo : null,
    round: 'roundId' in data ? data.roundId : data.kind === 'round' ? data.round.roundId : null,
    attemptsMade: job.attemptsMade,
    failedReason: job.failedReason ?? null,
  };
}

/** Counts per state of both queues, the rounds in progress, active and recently failed jobs, the schedule. */
export async function readQueueStatus(connection: QueueConnection, failedLimit = 20): Promise<QueueStatus> {
  const queues = [new Queue(JOBS_QUEUE, connectionOf(connection)), new Queue(HOST_QUEUE, connectionOf(connection))];
  try {
    const counts: QueueStatus['counts'] = {};
    const active: JobSummary[] = [];
    const failed: JobSummary[] = [];
    for (const queue of queues) {
      counts[queue.name] = await queue.getJobCounts('waiting', 'waiting-children', 'active', 'delayed', 'completed', 'failed');
      for (const job of await queue.getJobs(['active'])) active.push(summarize(queue.name, job as Job));
      for (const job of await queue.getJobs(['failed'], 0, failedLimit - 1)) failed.push(summarize(queue.name, job as Job));
    }
    const host = queues[1] as Queue;
    const rounds = (await host.getJobs(['waiting-children', 'waiting', 'active'])).filter((job) => job.name === 'round').map((job) => (job.data as HostRoundData).round.roundId);
    const [scheduler] = await host.getJobSchedulers(0, 0);
    const workers = (await (queues[0] as Queue).getWorkers()).length;
    return {
      counts,
      rounds: rounds.sort(),
      active,
      failed,
      schedule: scheduler === undefined ? null : { pattern: scheduler.pattern ?? null, next: scheduler.next === undefined ? null : new Date(scheduler.next).toISOString() },
      workers,
    };
  } finally {
    await Promise.all(queues.map((queue) => queue.close()));
  }
}

/** Removes every key of the queues under the connection's prefix (tests, or a fresh start). */
export async function obliterateQueues(connection: QueueConnection): Promise<void> {
  for (const name of [JOBS_QUEUE, HOST_QUEUE]) {
    const queue = new Queue(name, connectionOf(connection));
    try {
      await queue.obliterate({ force: true });
    } finally {
      await queue.close();
    }
  }
}

import { randomBytes } from 'node:crypto';
import { appendFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createModelClient, runAgentRollout, runBaselineRollout } from '@envgen/agent';
import type { ModelClient, SolverKind, ToolFormat, Trajectory } from '@envgen/agent';
import type { Settings } from '@envgen/config';
import { EnvgenError, describeError } from '@envgen/core';
import type { Logger, Task, TokenUsage } from '@envgen/core';
import { openPool } from '@envgen/pool';
import type { IsSolvedOptions } from '@envgen/rewards';
import type { SandboxProvider } from '@envgen/sandbox';
import { materializeInstance } from '@envgen/tasks';
import { openSandboxProvider } from './env-command.js';
import type { Progress } from './progress.js';
import { recordRun, summarizeSolverRun } from './run-records.js';

/** Options of `envgen run`. */
export interface RunOptions {
  /** Only instances of this repo (`owner/name`). */
  repo?: string;
  /** Only instances made by this strategy. */
  strategy?: string;
  /** Instances to run at most (default: every instance with a task). */
  limit?: number;
  /** Rollouts per instance (default 1). */
  attempts?: number;
  /** Default `agent`. */
  solver?: SolverKind;
  /** The agent's OpenAI-compatible endpoint (default: the OpenAI API). */
  baseUrl?: string;
  model?: string;
  /** Default: the environment's OPENAI_API_KEY, else none. */
  apiKey?: string;
  /** How tools reach the model (default `auto`). */
  toolFormat?: ToolFormat;
  temperature?: number;
  maxTurns?: number;
  /** Rollouts at once (default: 8 for the agent, the cores for the baseline). */
  concurrency?: number;
  /** Directory of the trajectory file (default `<home>/rollouts`). */
  out?: string;
  /** When a rollout solves its instance (default entity F1 = 1). */
  solvedBy?: IsSolvedOptions;
  /** Default: time, solver and a random suffix. */
  runId?: string;
}

/** Mean score per localization level over the scored rollouts. */
export interface LevelMeans {
  file: number;
  module: number;
  entity: number;
}

/** What `envgen run` did. */
export interface RunReport extends RunTotals {
  solver: SolverKind;
  model: string | null;
  levels: LevelMeans | null;
  /** How episodes ended. */
  finish: Record<Trajectory['finish']['reason'], number>;
}

/** What every rollout run reports, whatever its task. */
export interface RunTotals {
  runId: string;
  /** The JSONL file of trajectories, one per rollout (errors included). */
  trajectories: string;
  /** Instances selected, and rollouts attempted on them. */
  instances: number;
  rollouts: number;
  /** Rollouts scored and recorded in the pool (all but `errors`). */
  scored: number;
  /** Rollouts whose model endpoint failed: written, neither scored nor recorded. */
  errors: number;
  /** Over scored rollouts; null when none was scored. */
  meanReward: number | null;
  solveRate: number | null;
  usage: TokenUsage;
  /** Wall-clock seconds of the whole run. */
  seconds: number;
}

/** The endpoint flags every model-driven command takes. */
export interface ModelFlags {
  model: string;
  baseUrl?: string;
  apiKey?: string;
  toolFormat?: ToolFormat;
  temperature?: number;
}

/** The model client of `--model`/`--base-url`, checked to answer before any work starts. */
export async function openModelClient(flags: ModelFlags, env: Record<string, string | undefined>, progress: Progress): Promise<ModelClient> {
  const apiKey = flags.apiKey ?? env['OPENAI_API_KEY'];
  const client = createModelClient({
    model: flags.model,
    ...(flags.baseUrl === undefined ? {} : { baseURL: flags.baseUrl }),
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(flags.toolFormat === undefined ? {} : { toolFormat: flags.toolFormat }),
    ...(flags.temperature === undefined ? {} : { temperature: flags.temperature }),
  });
  progress.phase(`checking the model endpoint ${flags.baseUrl ?? ''}`.trim());
  await client.check();
  return client;
}

/** Default rollouts at once for the agent: they mostly wait on the model server. */
const AGENT_CONCURRENCY = 8;

/** A run id that sorts by time: `20250101-120000-agent-1a2b3c`. */
export function makeRunId(solver: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${solver}-${randomBytes(3).toString('hex')}`;
}

/**
 * `envgen run`: picks instances with a task from the pool, checks each out leak-free into a
 * temporary directory, runs the agent (an OpenAI-compatible model driving a bash shell in
 * the sandbox) or the BM25 baseline on it, scores the localization against the task's gold,
 * records the outcome in the pool, and appends the trajectory to `<out>/<run-id>.jsonl` as
 * soon as it ends (an interrupted run keeps what finished).
 */
export async function runRun(
  options: RunOptions,
  settings: Settings,
  logger: Logger,
  progress: Progress,
  env: Record<string, string | undefined> = {},
): Promise<RunReport> {
  const solver = options.solver ?? 'agent';
  const attempts = options.attempts ?? 1;
  if (attempts < 1) throw new EnvgenError('usage', '--attempts must be at least 1');
  const runSolver = await openRunSolver({ ...options, solver }, settings, logger, progress, env);
  const pool = openPool(settings.home, { logger });
  try {
    const tasks: Task[] = [];
    for (const entry of pool.listInstances({ repo: options.repo, strategy: options.strategy, hasTask: true, ...(options.limit ? { limit: options.limit } : {}) })) {
      if (entry.task !== null) tasks.push(entry.task);
    }
    if (tasks.length === 0) {
      const filter = [options.repo && `repo ${options.repo}`, options.strategy && `strategy ${options.strategy}`].filter(Boolean).join(', ');
      throw new EnvgenError(
        'usage',
        `no instance with a task in the pool at ${settings.home}${filter ? ` for ${filter}` : ''}; make some with: envgen inject --repo <repo> (it builds tasks), or envgen tasks --repo <repo>`,
      );
    }
    const { report } = await rolloutTasks(tasks, { ...options, solver, attempts }, runSolver, settings, logger, progress, (trajectory) => {
      pool.recordAttempt(trajectory.instance_id, { reward: trajectory.reward.reward, solved: trajectory.solved });
    });
    recordRun(settings.home, 'solver', summarizeSolverRun(report, new Date()));
    return report;
  } finally {
    pool.close();
  }
}

/** The solver a run uses: a model client and sandboxes for the agent, nothing for the baseline. */
export interface RunSolver {
  client: ModelClient | undefined;
  provider: SandboxProvider | undefined;
}

/** The agent's model client (its endpoint checked) and sandbox provider; nothing for the baseline. */
export async function openRunSolver(
  options: Pick<RunOptions, 'model' | 'baseUrl' | 'apiKey' | 'toolFormat' | 'temperature'> & { solver: SolverKind },
  settings: Settings,
  logger: Logger,
  progress: Progress,
  env: Record<string, string | undefined>,
): Promise<RunSolver> {
  if (options.solver !== 'agent') return { client: undefined, provider: undefined };
  if (options.model === undefined) {
    throw new EnvgenError('usage', 'the agent needs a model: pass --model NAME and --base-url URL of an OpenAI-compatible server (e.g. vLLM), or run offline with --solver baseline');
  }
  const client = await openModelClient({ ...options, model: options.model }, env, progress);
  return { client, provider: await openSandboxProvider(settings, logger) };
}

/**
 * Runs `attempts` rollouts of the solver on each task: a leak-free checkout in a temp dir,
 * the episode, its score; each trajectory is appended to `<out>/<run-id>.jsonl` as soon as it
 * ends and handed to `onScored` unless its model endpoint failed.
 */
export async function rolloutTasks(
  tasks: readonly Task[],
  options: RunOptions & { solver: SolverKind; attempts: number },
  { client, provider }: RunSolver,
  settings: Settings,
  logger: Logger,
  progress: Progress,
  onScored: (trajectory: Trajectory, attempt: number) => void,
): Promise<{ report: RunReport; trajectories: Trajectory[] }> {
  const { solver, attempts } = options;
  const started = performance.now();
  const runId = options.runId ?? makeRunId(solver);
  const file = await trajectoryFile(options.out, settings, runId);
  const jobs = tasks.flatMap((task) => Array.from({ length: attempts }, (_, attempt) => ({ task, attempt })));
  const trajectories: Trajectory[] = [];
  const scratch = await mkdtemp(join(tmpdir(), 'envgen-checkouts-'));
  progress.phase(`${solver} rollouts`, jobs.length);
  const append = createJsonlAppender(file);
  try {
    const rollout = async ({ task, attempt }: { task: Task; attempt: number }, index: number): Promise<void> => {
      const dir = join(scratch, String(index));
      try {
        const { dir: checkout } = await materializeInstance(task, dir);
        const trajectory = client !== undefined && provider !== undefined
          ? await runAgentRollout({
              task,
              checkout,
              sandboxProvider: provider,
              client,
              runId,
              logger: logger.child({ instance: task.instance_id }),
              ...(options.maxTurns === undefined ? {} : { maxTurns: options.maxTurns }),
              ...(options.solvedBy === undefined ? {} : { solvedBy: options.solvedBy }),
              ...(settings.sandbox === 'docker' && task.image_name ? { image: task.image_name } : {}),
            })
          : await runBaselineRollout({ task, checkout, runId, ...(options.solvedBy === undefined ? {} : { solvedBy: options.solvedBy }) });
        if (trajectory.finish.reason !== 'error') onScored(trajectory, attempt);
        trajectories.push(trajectory);
        await append(trajectory);
      } finally {
        await rm(dir, { recursive: true, force: true });
        progress.tick();
      }
    };
    const lanes = options.concurrency ?? (solver === 'agent' ? AGENT_CONCURRENCY : availableParallelism());
    await runInLanes(jobs, lanes, rollout);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return { report: summarizeRun(runId, solver, client?.model ?? null, file, tasks.length, trajectories, (performance.now() - started) / 1000), trajectories };
}

/** `<out>/<run-id>.jsonl` (out defaults to `<home>/rollouts`), its directory created. */
export async function trajectoryFile(out: string | undefined, settings: Settings, runId: string): Promise<string> {
  const outDir = resolve(out ?? join(settings.home, 'rollouts'));
  await mkdir(outDir, { recursive: true });
  return join(outDir, `${runId}.jsonl`);
}

/** Appends values to a JSONL file one at a time, in call order: lines never interleave. */
export function createJsonlAppender(file: string): (value: unknown) => Promise<void> {
  let written = Promise.resolve();
  return (value) => {
    written = written.then(() => appendFile(file, `${JSON.stringify(value)}\n`));
    return written;
  };
}

/**
 * Runs `job` over `jobs`, `lanes` at a time, in order of submission. A failing job stops new
 * ones; those under way finish (and keep what they wrote) before the error is thrown.
 */
export async function runInLanes<T>(jobs: readonly T[], lanes: number, job: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: unknown;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(lanes, jobs.length)) }, async () => {
      for (let index = next++; failure === undefined && index < jobs.length; index = next++) {
        await job(jobs[index] as T, index).catch((error: unknown) => {
          failure ??= error;
        });
      }
    }),
  );
  if (failure !== undefined) {
    throw failure instanceof EnvgenError ? failure : new EnvgenError('internal', `a rollout failed: ${describeError(failure)}`, { cause: failure });
  }
}

/** Sums up a run's trajectories: error rollouts count apart and are not scored. */
export function summarizeRun(
  runId: string,
  solver: SolverKind,
  model: string | null,
  file: string,
  instances: number,
  trajectories: readonly Trajectory[],
  seconds: number,
): RunReport {
  const scored = trajectories.filter((trajectory) => trajectory.finish.reason !== 'error');
  const mean = (pick: (trajectory: Trajectory) => number): number | null =>
    scored.length === 0 ? null : scored.reduce((sum, trajectory) => sum + pick(trajectory), 0) / scored.length;
  const finish = { localization_finish: 0, max_turns: 0, error: 0 };
  for (const trajectory of trajectories) finish[trajectory.finish.reason] += 1;
  return {
    ...runTotals({ runId, file, instances, trajectories, scored, seconds }),
    solver,
    model,
    meanReward: mean((trajectory) => trajectory.reward.reward),
    solveRate: mean((trajectory) => (trajectory.solved ? 1 : 0)),
    levels:
      scored.length === 0
        ? null
        : {
            file: mean((trajectory) => trajectory.reward.file) ?? 0,
            module: mean((trajectory) => trajectory.reward.module) ?? 0,
            entity: mean((trajectory) => trajectory.reward.entity) ?? 0,
          },
    finish,
  };
}

/** The counts and token totals of a run's trajectories; the rewards are the caller's. */
export function runTotals(input: {
  runId: string;
  file: string;
  instances: number;
  trajectories: ReadonlyArray<{ usage: TokenUsage }>;
  scored: readonly unknown[];
  seconds: number;
}): Omit<RunTotals, 'meanReward' | 'solveRate'> {
  const usage: TokenUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  for (const trajectory of input.trajectories) {
    usage.prompt_tokens += trajectory.usage.prompt_tokens;
    usage.completion_tokens += trajectory.usage.completion_tokens;
    usage.total_tokens += trajectory.usage.total_tokens;
  }
  return {
    runId: input.runId,
    trajectories: input.file,
    instances: input.instances,
    rollouts: input.trajectories.length,
    scored: input.scored.length,
    errors: input.trajectories.length - input.scored.length,
    usage,
    seconds: input.seconds,
  };
}

/** The human summary of a run. */
export function formatRunReport(report: RunReport): string {
  const pct = (x: number | null): string => (x === null ? '–' : `${(100 * x).toFixed(1)}%`);
  const num = (x: number | null, digits = 3): string => (x === null ? '–' : x.toFixed(digits));
  const lines = [
    `run ${report.runId}: ${report.rollouts} ${report.solver} rollout(s) on ${report.instances} instance(s)${report.model === null ? '' : ` with ${report.model}`} in ${report.seconds.toFixed(1)} s`,
    `  mean reward   ${num(report.meanReward)} of 3`,
    `  solve rate    ${pct(report.solveRate)}`,
    `  F1 per level  file ${num(report.levels?.file ?? null)}  module ${num(report.levels?.module ?? null)}  entity ${num(report.levels?.entity ?? null)}`,
    `  episodes      ${report.finish.localization_finish} answered, ${report.finish.max_turns} out of turns, ${report.finish.error} model errors (not recorded)`,
  ];
  if (report.usage.total_tokens > 0) {
    lines.push(`  tokens        ${report.usage.total_tokens} (${report.usage.prompt_tokens} prompt, ${report.usage.completion_tokens} completion)`);
  }
  lines.push(`  trajectories  ${report.trajectories}`);
  return lines.join('\n');
}

import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { readBundle } from '@envgen/bundle';
import type { Settings } from '@envgen/config';
import { EnvgenError } from '@envgen/core';
import type { Logger, StrategyFamily } from '@envgen/core';
import { openPool } from '@envgen/pool';
import { INJECTOR_STRATEGIES, MAX_ORDER, runSelfPlay } from '@envgen/selfplay';
import type { EpisodeBudget, FedBundle, InjectorStrategy, SelfPlayReport } from '@envgen/selfplay';
import type { BuildTasksReport } from '@envgen/tasks';
import { checkoutRepo, prepareRepoRun } from './env-command.js';
import type { Progress } from './progress.js';
import { createJsonlAppender, makeRunId, openModelClient, trajectoryFile } from './run-command.js';
import type { ModelFlags } from './run-command.js';
import { buildRepoTasks, formatTasksReport } from './tasks-command.js';

/** Options of `envgen selfplay`. */
export interface SelfPlayCommandOptions extends Partial<ModelFlags> {
  repo: string;
  rounds?: number;
  group?: number;
  seed?: number;
  alpha?: number;
  strategies?: string[];
  /** A directory of bundles (or one bundle) made by another injector: no LLM injects. */
  bundles?: string;
  injector?: EpisodeBudget;
  solver?: EpisodeBudget;
  concurrency?: number;
  out?: string;
  runId?: string;
  /** Build tasks (self-play statements) for the new instances (default true). */
  tasks?: boolean;
}

/** The flags of `envgen selfplay` as commander parses them. */
export interface SelfPlayFlags {
  repo: string;
  baseUrl?: string;
  model?: string;
  apiKey?: string;
  toolFormat?: ModelFlags['toolFormat'];
  rounds: number;
  group: number;
  seed: number;
  alpha?: number;
  strategies?: string;
  bundles?: string;
  injectorMaxTurns?: number;
  solverMaxTurns?: number;
  maxTokens?: number;
  wallTime?: number;
  concurrency?: number;
  out?: string;
  tasks: boolean;
}

/** The command's options from its flags. */
export function readSelfPlayFlags(flags: SelfPlayFlags): SelfPlayCommandOptions {
  const budget = (maxTurns: number | undefined): EpisodeBudget => ({
    ...(maxTurns === undefined ? {} : { maxTurns: Math.max(1, maxTurns) }),
    ...(flags.maxTokens === undefined ? {} : { maxTokens: flags.maxTokens }),
    ...(flags.wallTime === undefined ? {} : { wallTimeMs: flags.wallTime * 1000 }),
  });
  const { repo, baseUrl, model, apiKey, toolFormat, rounds, group, seed, alpha, bundles, concurrency, out, tasks } = flags;
  return {
    repo,
    rounds,
    group,
    seed,
    tasks,
    injector: budget(flags.injectorMaxTurns),
    solver: budget(flags.solverMaxTurns),
    ...(flags.strategies === undefined ? {} : { strategies: flags.strategies.split(',').map((name) => name.trim()).filter(Boolean) }),
    ...(baseUrl === undefined ? {} : { baseUrl }),
    ...(model === undefined ? {} : { model }),
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(toolFormat === undefined ? {} : { toolFormat }),
    ...(alpha === undefined ? {} : { alpha }),
    ...(bundles === undefined ? {} : { bundles }),
    ...(concurrency === undefined ? {} : { concurrency: Math.max(1, concurrency) }),
    ...(out === undefined ? {} : { out }),
  };
}

/** What `envgen selfplay` did. */
export interface SelfPlayCommandReport extends SelfPlayReport {
  model: string;
  /** The JSONL file of both roles' trajectories. */
  trajectories: string;
  tasks: BuildTasksReport | null;
}

/** The bundle directories under `dir`: `dir` itself when it is one, else its subdirectories that are. */
async function findBundleDirs(dir: string): Promise<string[]> {
  if (existsSync(join(dir, 'bug_inject.diff'))) return [dir];
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => {
    throw new EnvgenError('usage', `--bundles ${dir} is not a readable directory`);
  });
  return entries
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, 'bug_inject.diff')))
    .map((entry) => join(dir, entry.name))
    .sort();
}

const FAMILIES: readonly StrategyFamily[] = ['procedural', 'removal', 'history', 'combine', 'llm'];

/** A fed bundle, with the strategy, family, order and parent of an export's metadata.json when it has one. */
async function readFedBundle(dir: string): Promise<FedBundle> {
  const files = await readBundle(dir, { alongside: ['metadata.json'] });
  const bundle: FedBundle = { source: dir, files };
  const metadata = await readFile(join(dir, 'metadata.json'), 'utf8').then((text) => JSON.parse(text) as Record<string, unknown>, () => null);
  if (typeof metadata?.['strategy'] === 'string' && /^[a-z0-9_]+$/.test(metadata['strategy'])) bundle.strategy = metadata['strategy'];
  const family = metadata?.['family'];
  if (typeof family === 'string' && (FAMILIES as readonly string[]).includes(family)) bundle.family = family as StrategyFamily;
  if (metadata?.['order'] === MAX_ORDER && typeof metadata['parent'] === 'string') Object.assign(bundle, { order: MAX_ORDER, parent: metadata['parent'] });
  return bundle;
}

function readStrategies(names: readonly string[] | undefined): InjectorStrategy[] | undefined {
  if (names === undefined) return undefined;
  const unknown = names.filter((name) => !(INJECTOR_STRATEGIES as readonly string[]).includes(name));
  if (unknown.length > 0 || names.length === 0) {
    throw new EnvgenError('usage', `--strategies takes ${INJECTOR_STRATEGIES.join(', ')}; got ${names.join(', ') || 'none'}`);
  }
  return names as InjectorStrategy[];
}

/**
 * `envgen selfplay`: self-play on one repo. The LLM injector (or `--bundles` from another
 * injector) makes bundles, each checked with the seven checks; accepted ones become instances
 * a group of repair rollouts is run on; failed repairs become order-2 instances. Trajectories
 * of both roles go to `<out>/<run-id>.jsonl`, then the new instances get tasks.
 */
export async function runSelfPlayCommand(
  options: SelfPlayCommandOptions,
  settings: Settings,
  logger: Logger,
  progress: Progress,
  env: Record<string, string | undefined> = {},
): Promise<SelfPlayCommandReport> {
  if (options.model === undefined) {
    throw new EnvgenError('usage', 'self-play needs a model for the solver (and the injector): pass --model NAME and --base-url URL of an OpenAI-compatible server (e.g. vLLM)');
  }
  const strategies = readStrategies(options.strategies);
  const group = options.group ?? 8;
  if (group < 1) throw new EnvgenError('usage', '--group must be at least 1');
  const fed = options.bundles === undefined ? undefined : await Promise.all((await findBundleDirs(resolve(options.bundles))).map(readFedBundle));
  if (fed !== undefined && fed.length === 0) throw new EnvgenError('usage', `--bundles ${options.bundles ?? ''} holds no bundle (a directory with bug_inject.diff and the other four files)`);
  const client = await openModelClient({ ...options, model: options.model }, env, progress);
  const checkout = await checkoutRepo(options.repo, settings, logger, progress);
  const { provider, repo, worktree } = checkout;
  const pool = openPool(settings.home, { logger });
  try {
    const run = await prepareRepoRun(checkout, settings, logger, progress);
    const runId = options.runId ?? makeRunId('selfplay');
    const file = await trajectoryFile(options.out, settings, runId);
    const report = await runSelfPlay({
      ...run,
      pool,
      client,
      runId,
      rounds: options.rounds ?? 1,
      group,
      seed: options.seed ?? 0,
      writeTrajectory: createJsonlAppender(file),
      logger,
      onProgress: (message) => progress.phase(message),
      ...(options.alpha === undefined ? {} : { alpha: options.alpha }),
      ...(strategies === undefined ? {} : { strategies }),
      ...(fed === undefined ? {} : { bundles: fed }),
      ...(options.injector === undefined ? {} : { injectorLimits: options.injector }),
      ...(options.solver === undefined ? {} : { solverLimits: options.solver }),
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      ...(settings.sandbox === 'docker' ? { image: settings.dockerImage } : {}),
    });
    const tasks = options.tasks === false ? null : await buildRepoTasks({ repo, worktree: worktree.path, profile: run.profile, provider }, pool, { statement: 'self-play' }, settings, logger, progress);
    return { ...report, model: client.model, trajectories: file, tasks };
  } finally {
    pool.close();
    await worktree.remove();
  }
}

/** The human summary: one line per round, then the totals. */
export function formatSelfPlayReport(report: SelfPlayCommandReport): string {
  const num = (x: number | null): string => (x === null ? '–' : x.toFixed(2));
  const lines = [`self-play ${report.runId} on ${report.repo}@${report.commit.slice(0, 8)} with ${report.model} (α ${report.alpha}), ${report.rounds.length} round(s) in ${report.seconds.toFixed(1)} s`, ''];
  for (const [index, round] of report.rounds.entries()) {
    const head = `round ${index + 1}  ${round.strategy}${round.source === null ? '' : ` (${round.source})`}`;
    if (!round.checksPassed) {
      lines.push(`${head}: rejected, injector reward ${num(round.injectorReward)}`);
      for (const failed of round.failed) lines.push(`  ✗ ${failed.name} — ${failed.evidence.length > 200 ? `${failed.evidence.slice(0, 197)}...` : failed.evidence}`);
      continue;
    }
    const rewards = round.solverRewards.map((reward) => (reward > 0 ? '+1' : '-1')).join(' ');
    lines.push(`${head}: ${round.instanceId ?? '?'}`);
    lines.push(`  solver rewards ${rewards || 'none scored'}; solve rate ${num(round.solveRate)}; injector reward ${num(round.injectorReward)}`);
    if (round.higherOrder.tried > 0 || round.higherOrder.skipped.length > 0) {
      lines.push(`  higher order: ${round.higherOrder.kept.length} of ${round.higherOrder.tried} candidate(s) kept${round.higherOrder.kept.length > 0 ? ` (${round.higherOrder.kept.join(', ')})` : ''}${round.higherOrder.skipped.length > 0 ? `; ${round.higherOrder.skipped.join('; ')}` : ''}`);
    }
  }
  const accepted = report.rounds.filter((round) => round.checksPassed).length;
  const higher = report.rounds.reduce((sum, round) => sum + round.higherOrder.kept.length, 0);
  lines.push('', `accepted     ${accepted} of ${report.rounds.length} bundle(s); ${higher} higher-order instance(s)`);
  if (report.tasks !== null) lines.push(`tasks        ${formatTasksReport(report.tasks)}`);
  lines.push(`trajectories ${report.trajectories}`);
  return lines.join('\n');
}

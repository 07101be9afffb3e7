import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import type { Settings } from '@envgen/config';
import { EnvgenError } from '@envgen/core';
import { warmFailureOutputs } from '@envgen/inject';
import type { Instance, Logger, ProblemStatementKind, Task } from '@envgen/core';
import { openPool } from '@envgen/pool';
import type { InstanceStats, Pool } from '@envgen/pool';
import type { Profile, ResolvedRepo } from '@envgen/repo';
import type { SandboxProvider } from '@envgen/sandbox';
import { loadCachedBaseline } from '@envgen/testrun';
import type { Baseline } from '@envgen/testrun';
import { candidateLimits } from '@envgen/validate';
import { FAILING_TESTS_RUN, buildTasks, instancesToBuild, materializeInstance } from '@envgen/tasks';
import type { BuildTasksReport, IssueWriterOptions } from '@envgen/tasks';
import { checkoutRepo, resolveProfile } from './env-command.js';
import type { Progress } from './progress.js';

/** The statement kinds, in the order `--help` lists them. */
export const STATEMENT_KINDS: readonly ProblemStatementKind[] = ['tests', 'self-play', 'issue'];

/** How problem statements are written: the kind, and for `issue` the model endpoint. */
export interface StatementOptions {
  statement: ProblemStatementKind;
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  /** A Markdown file of style examples separated by lines of `---`. */
  issueExamples?: string;
}

/** Options of `envgen tasks`. */
export interface TasksOptions extends StatementOptions {
  repo: string;
  rebuild?: boolean;
  limit?: number;
  /** The home whose pool holds the instances (default the settings' home; a growth worker's scratch pool). */
  poolHome?: string;
  /** Instances from which on the failing tests run in warm interpreters (default {@link WARM_TASKS_MIN}). */
  warmFrom?: number;
}

/** The issue writer's settings, or undefined for the other kinds; `issue` without `--model` is a usage error. */
export async function issueWriterOptions(options: StatementOptions, env: Record<string, string | undefined>): Promise<IssueWriterOptions | undefined> {
  if (options.statement !== 'issue') return undefined;
  if (options.model === undefined) throw new EnvgenError('usage', '--statement issue needs --model (and --base-url for an OpenAI-compatible server such as vLLM)');
  const apiKey = options.apiKey ?? env['OPENAI_API_KEY'];
  const examples =
    options.issueExamples === undefined
      ? undefined
      : (await readFile(options.issueExamples, 'utf8'))
          .split(/^---$/m)
          .map((example) => example.trim())
          .filter((example) => example !== '');
  if (examples !== undefined && examples.length === 0) throw new EnvgenError('usage', `${options.issueExamples} holds no examples; separate them with lines of ---`);
  return {
    model: options.model,
    ...(options.baseUrl === undefined ? {} : { baseURL: options.baseUrl }),
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(examples === undefined ? {} : { examples }),
  };
}

/** A repo checked out with its profile, as the task builder needs it. */
export interface RepoForTasks {
  repo: ResolvedRepo;
  worktree: string;
  profile: Profile;
  provider: SandboxProvider;
  /** The clean baseline, when known: cold runs of failing tests get the limits candidates had. */
  baseline?: Baseline | null;
}

/** Builds the tasks of a checked-out repo's instances that lack one (or all, with `rebuild`). */
export async function buildRepoTasks(
  checkout: RepoForTasks,
  pool: Pool,
  options: StatementOptions & { rebuild?: boolean; limit?: number; llm?: IssueWriterOptions; failureOutputs?: ReadonlyMap<string, string> },
  settings: Settings,
  logger: Logger,
  progress: Progress,
): Promise<BuildTasksReport> {
  const { repo, baseline } = checkout;
  const limits = baseline === undefined || baseline === null ? undefined : candidateLimits(checkout.profile, baseline);
  return buildTasks({
    pool,
    home: settings.home,
    repo: {
      owner: repo.owner,
      name: repo.name,
      commit: repo.commit,
      mirror: repo.mirror,
      submodules: repo.submodules,
      worktree: checkout.worktree,
      profile: checkout.profile,
      ...(limits === undefined ? {} : { limits }),
    },
    provider: checkout.provider,
    statement: options.statement,
    imageName: settings.dockerImage,
    concurrency: availableParallelism(),
    logger,
    ...(options.llm === undefined ? {} : { llm: options.llm }),
    ...(options.rebuild === undefined ? {} : { rebuild: options.rebuild }),
    ...(options.limit === undefined ? {} : { limit: options.limit }),
    ...(options.failureOutputs === undefined ? {} : { failureOutputs: options.failureOutputs }),
    onProgress: (event) => {
      if (event.kind === 'start') progress.phase(`building tasks (${options.statement} statements)`, event.total);
      else progress.tick();
    },
  });
}

/**
 * Instances from which on `envgen tasks` starts warm interpreters for the failure output of
 * their statements: their start (the clean suite run once per interpreter) costs about what
 * a few cold runs of the failing tests do on a quick suite (toolz: 8 instances 2.4 s warm
 * against 2.9 s cold).
 */
export const WARM_TASKS_MIN = 8;

/**
 * What a cold run of an instance's failing tests costs at least (a pytest start, the
 * project's imports, the collection of their files), in seconds: on a slow suite the warm
 * start, a whole clean run, pays only from as many instances as its seconds.
 */
const COLD_RUN_SECONDS = 1;

/**
 * The failure output of the statements about to be built, from a validator's warm
 * interpreters (as `inject` gets it for the bugs it proves), when the commit's baseline is
 * cached (`envgen env` or an inject left it) and there are enough of them: at least
 * {@link WARM_TASKS_MIN}, and at least the clean suite's seconds over {@link COLD_RUN_SECONDS}
 * (or `warmFrom`); else none, and each instance's failing tests run cold.
 */
async function warmStatementOutputs(
  checkout: RepoForTasks,
  pool: Pool,
  options: StatementOptions & { rebuild?: boolean; limit?: number; warmFrom?: number },
  settings: Settings,
  logger: Logger,
  progress: Progress,
): Promise<ReadonlyMap<string, string> | undefined> {
  if (options.statement === 'self-play') return undefined;
  const { repo, profile, baseline } = checkout;
  const instances = instancesToBuild({ pool, repo, ...(options.rebuild === undefined ? {} : { rebuild: options.rebuild }), ...(options.limit === undefined ? {} : { limit: options.limit }) });
  if (instances.length < (options.warmFrom ?? WARM_TASKS_MIN)) return undefined;
  if (baseline === undefined || baseline === null) return undefined;
  if (options.warmFrom === undefined && instances.length < Math.max(0, ...baseline.suiteSeconds) / COLD_RUN_SECONDS) return undefined;
  progress.phase(`running the failing tests of ${instances.length} instance(s) in warm interpreters`);
  const codeCache = join(settings.home, 'code-cache');
  return warmFailureOutputs({ worktree: checkout.worktree, profile, baseline, sandboxProvider: checkout.provider, codeCache, logger }, instances, FAILING_TESTS_RUN);
}

/** `envgen tasks`: gold labels, problem statements and environments for a repo's instances. */
export async function runTasks(options: TasksOptions, settings: Settings, logger: Logger, progress: Progress, env: Record<string, string | undefined> = process.env): Promise<BuildTasksReport> {
  const llm = await issueWriterOptions(options, env);
  const { provider, repo, worktree } = await checkoutRepo(options.repo, settings, logger, progress);
  const pool = openPool(options.poolHome ?? settings.home, { logger });
  try {
    progress.phase('detecting the test profile');
    const profile = await resolveProfile(worktree.path, repo, settings, provider);
    const checkout = { repo, worktree: worktree.path, profile, provider, baseline: await loadCachedBaseline(settings.home, repo.commit, profile) };
    const started = performance.now();
    const failureOutputs = await warmStatementOutputs(checkout, pool, options, settings, logger, progress);
    const report = await buildRepoTasks(checkout, pool, { ...options, ...(llm === undefined ? {} : { llm }), ...(failureOutputs === undefined ? {} : { failureOutputs }) }, settings, logger, progress);
    // The warm interpreters' pass is part of building these tasks.
    return { ...report, seconds: (performance.now() - started) / 1000 };
  } finally {
    pool.close();
    await worktree.remove();
  }
}

/** The human form of a task-building report. */
export function formatTasksReport(report: BuildTasksReport): string {
  const lines = [
    `${report.repo}: ${report.built} task(s) built with ${report.statement} statements in ${report.seconds.toFixed(1)} s${report.warmOutputs > 0 ? ` (failure output of ${report.warmOutputs} from the validator's warm runs)` : ''}`,
  ];
  if (report.usage.total_tokens > 0) lines.push(`tokens: ${report.usage.prompt_tokens} prompt + ${report.usage.completion_tokens} completion`);
  for (const failure of report.failed) lines.push(`not built: ${failure.instance_id}: ${failure.error}`);
  if (report.built === 0 && report.failed.length === 0) lines.push('nothing to build: every instance of this repo and commit has a task (use --rebuild to redo them)');
  return lines.join('\n');
}

/** What `envgen show` prints; `--json` prints exactly this object. */
export interface ShowReport {
  instance: Instance;
  stats: InstanceStats;
  task: Task | null;
  bundleDir: string;
}

function openInstance(pool: Pool, id: string): Instance {
  const instance = pool.getInstance(id);
  if (instance === undefined) throw new EnvgenError('usage', `no instance ${id} in the pool at ${pool.dir}; list them with: envgen pool list`);
  return instance;
}

/** `envgen show`: an instance's bug, labels, problem statement and outcomes. */
export async function runShow(id: string, settings: Settings, logger: Logger): Promise<ShowReport> {
  const pool = openPool(settings.home, { logger });
  try {
    const instance = openInstance(pool, id);
    return { instance, stats: pool.stats(id) ?? { attempts: 0, solved: 0, meanReward: null, solveRate: null }, task: pool.getTask(id) ?? null, bundleDir: pool.bundleDir(id) };
  } finally {
    pool.close();
  }
}

function labelLines(task: Task): string[] {
  return task.file_changes.flatMap((file) => {
    const { edited_entities, edited_modules, added_entities, added_modules } = file.changes;
    const parts = [
      edited_entities.length > 0 ? `edited entities: ${edited_entities.join(', ')}` : '',
      edited_modules.length > 0 ? `edited modules: ${edited_modules.join(', ')}` : '',
      added_entities.length > 0 ? `added entities: ${added_entities.join(', ')}` : '',
      added_modules.length > 0 ? `added modules: ${added_modules.join(', ')}` : '',
    ].filter((part) => part !== '');
    return [`  ${file.file}`, ...(parts.length === 0 ? ['    (module level only)'] : parts.map((part) => `    ${part}`))];
  });
}

/** The human form of `envgen show`. */
export function formatShowReport(report: ShowReport): string {
  const { instance, stats, task } = report;
  const solve = stats.solveRate === null ? 'not attempted' : `${stats.attempts} attempt(s), solve rate ${(100 * stats.solveRate).toFixed(0)}%, mean reward ${(stats.meanReward ?? 0).toFixed(2)}`;
  const lines = [
    instance.instance_id,
    `repo         ${instance.repo} @ ${instance.base_commit}`,
    `strategy     ${instance.strategy} (${instance.family}): ${instance.description}`,
    `tests        ${instance.FAIL_TO_PASS.length} fail to pass, ${instance.PASS_TO_PASS.length} pass to pass`,
    `outcomes     ${solve}`,
    `bundle       ${report.bundleDir}`,
    '',
    'The bug:',
    instance.patch.trimEnd(),
    '',
    'FAIL_TO_PASS:',
    ...instance.FAIL_TO_PASS.map((test) => `  ${test}`),
    '',
  ];
  if (task === null) {
    lines.push(`No task yet: build it with: envgen tasks --repo <repo of ${instance.repo}>`);
    return lines.join('\n');
  }
  lines.push('Gold labels (the fix):', ...labelLines(task), '', `Problem statement (${task.problem_statement.kind}${task.problem_statement.model === undefined ? '' : `, ${task.problem_statement.model}`}):`);
  lines.push(task.problem_statement.text, '', `environment  ${task.environment.ref} = ${task.environment.commit} in ${task.environment.mirror}`);
  return lines.join('\n');
}

/** What `envgen materialize` made. */
export interface MaterializeReport {
  instance_id: string;
  dir: string;
  commit: string;
}

/** `envgen materialize`: a leak-free checkout of an instance's buggy tree. */
export async function runMaterialize(id: string, dir: string, settings: Settings, logger: Logger): Promise<MaterializeReport> {
  const pool = openPool(settings.home, { logger });
  let task: Task | undefined;
  try {
    openInstance(pool, id);
    task = pool.getTask(id);
  } finally {
    pool.close();
  }
  if (task === undefined) throw new EnvgenError('usage', `instance ${id} has no task yet; build it first with: envgen tasks --repo <its repo>`);
  const made = await materializeInstance(task, resolve(dir));
  return { instance_id: id, dir: made.dir, commit: made.commit };
}

import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { EnvgenError, describeError, nodeIdFile, silentLogger } from '@envgen/core';
import type { Instance, Logger, ProblemStatement, ProblemStatementKind, Task, TokenUsage } from '@envgen/core';
import type { Pool } from '@envgen/pool';
import type { Profile, Submodule } from '@envgen/repo';
import type { SandboxProvider } from '@envgen/sandbox';
import { buildInstanceEnvironment } from './environment.js';
import { captureFailureOutput } from './failure-output.js';
import type { FailureOutputLimits } from './failure-output.js';
import { computeTaskGold } from './gold.js';
import { fixRevealingStrings, writeIssueStatement } from './issue-statement.js';
import type { IssueWriterOptions } from './issue-statement.js';
import { readFileOrNull } from './read-file.js';
import { hideSourceFrames, makeSelfPlayStatement, makeTestsStatement } from './statements.js';
import type { FailingTest } from './statements.js';
import { extractTestSource } from './test-source.js';

/** Failing tests run to capture failure output: a few show the bug, more only cost time. */
export const FAILING_TESTS_RUN = 3;

/** The repo the tasks are built for, checked out clean at its commit. */
export interface TaskRepo {
  owner: string;
  name: string;
  commit: string;
  /** A git directory holding the commit (the repo's mirror). */
  mirror: string;
  /** The commit's fetched git submodules (see `ResolvedRepo.submodules`). */
  submodules: readonly Submodule[];
  /** A clean checkout of the commit; patched while failure output is captured, then restored. */
  worktree: string;
  profile: Profile;
  /** The limits the instances were validated with, when known. */
  limits?: FailureOutputLimits;
}

/** Options of {@link buildTasks}. */
export interface BuildTasksOptions {
  pool: Pool;
  home: string;
  repo: TaskRepo;
  provider: SandboxProvider;
  statement: ProblemStatementKind;
  /** The endpoint writing `issue` statements (required for them). */
  llm?: IssueWriterOptions;
  /** The image the instances' tests run in, recorded as `image_name`. */
  imageName: string;
  /** Rebuild tasks that exist already (default: only instances without one). */
  rebuild?: boolean;
  /** Only these instances. */
  ids?: readonly string[];
  limit?: number;
  /**
   * pytest's output (`--tb=short`) of the first {@link FAILING_TESTS_RUN} FAIL_TO_PASS tests
   * of instances, by id, as a validator's warm interpreters ran them (see
   * `RunInjectionOptions.failureOutputs`); the other instances' tests run cold here.
   */
  failureOutputs?: ReadonlyMap<string, string>;
  /** Instances built at once, each lane on its own copy of the worktree. Default 1. */
  concurrency?: number;
  logger?: Logger;
  onProgress?: (event: { kind: 'start'; total: number } | { kind: 'done'; instanceId: string; ok: boolean }) => void;
}

/** What {@link buildTasks} did. */
export interface BuildTasksReport {
  repo: string;
  statement: ProblemStatementKind;
  built: number;
  failed: Array<{ instance_id: string; error: string }>;
  /** Tokens the `issue` statements used. */
  usage: TokenUsage;
  /** Statements whose failure output came from {@link BuildTasksOptions.failureOutputs} instead of a cold run. */
  warmOutputs: number;
  seconds: number;
}

function failingTests(instance: Instance, worktree: string): FailingTest[] {
  return instance.FAIL_TO_PASS.map((nodeId) => {
    const source = readFileOrNull(join(worktree, nodeIdFile(nodeId)));
    return { nodeId, source: source === null ? null : extractTestSource(source, nodeId) };
  });
}

/**
 * The instances {@link buildTasks} builds with these options: of the repo and commit, without
 * a task unless `rebuild`, among `ids`, the first `limit`. Read before any task is written.
 */
export function instancesToBuild(options: Pick<BuildTasksOptions, 'pool' | 'rebuild' | 'ids' | 'limit'> & { repo: Pick<TaskRepo, 'owner' | 'name' | 'commit'> }): Instance[] {
  const repo = `${options.repo.owner}/${options.repo.name}`;
  const wanted = options.ids === undefined ? null : new Set(options.ids);
  const selected: Instance[] = [];
  for (const entry of options.pool.listInstances({ repo, ...(options.rebuild === true ? {} : { hasTask: false }) })) {
    if (entry.instance.base_commit !== options.repo.commit) continue;
    if (wanted !== null && !wanted.has(entry.instance.instance_id)) continue;
    selected.push(entry.instance);
    if (options.limit !== undefined && selected.length >= options.limit) break;
  }
  return selected;
}

async function makeStatement(instance: Instance, worktree: string, options: BuildTasksOptions, report: BuildTasksReport): Promise<ProblemStatement> {
  const { usage } = report;
  const created_at = new Date().toISOString();
  if (options.statement === 'self-play') {
    return { kind: 'self-play', text: makeSelfPlayStatement(options.pool.readBundle(instance.instance_id)['test_weaken.diff']), created_at };
  }
  const { repo } = options;
  const failing = failingTests(instance, worktree);
  const warm = options.failureOutputs?.get(instance.instance_id);
  if (warm !== undefined) report.warmOutputs += 1;
  const output =
    warm ??
    (await captureFailureOutput({
      provider: options.provider,
      worktree,
      profile: repo.profile,
      patch: instance.patch,
      nodeIds: instance.FAIL_TO_PASS.slice(0, FAILING_TESTS_RUN),
      ...(repo.limits === undefined ? {} : { limits: repo.limits }),
    }));
  if (options.statement === 'tests') {
    const testFiles = new Set(repo.profile.testFiles);
    return { kind: 'tests', text: makeTestsStatement(failing, hideSourceFrames(output, (path) => testFiles.has(path))), created_at };
  }
  if (options.llm === undefined) throw new EnvgenError('usage', 'issue statements need a model: pass --model (and --base-url for a local endpoint)');
  const issue = await writeIssueStatement(
    { repo: instance.repo, patch: instance.patch, failing, failureOutput: output, forbidden: fixRevealingStrings(instance.patch) },
    options.llm,
  );
  usage.prompt_tokens += issue.usage.prompt_tokens;
  usage.completion_tokens += issue.usage.completion_tokens;
  usage.total_tokens += issue.usage.total_tokens;
  return { kind: 'issue', text: issue.text, model: issue.model, usage: issue.usage, created_at };
}

/**
 * Builds the task of each instance of one repo and commit in the pool: gold labels from the
 * bug (tree-sitter), a problem statement of the chosen kind, and a leak-free environment ref.
 * An instance that fails is reported and skipped; it never gets an empty statement.
 */
export async function buildTasks(options: BuildTasksOptions): Promise<BuildTasksReport> {
  const started = performance.now();
  const logger = options.logger ?? silentLogger;
  const { repo } = options;
  const instances = instancesToBuild(options);
  const usage: TokenUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  const report: BuildTasksReport = { repo: `${repo.owner}/${repo.name}`, statement: options.statement, built: 0, failed: [], usage, warmOutputs: 0, seconds: 0 };
  options.onProgress?.({ kind: 'start', total: instances.length });
  const build = async (instance: Instance, worktree: string): Promise<void> => {
    const id = instance.instance_id;
    try {
      const file_changes = computeTaskGold(instance.patch, (path) => readFileOrNull(join(worktree, path)));
      const problem_statement = await makeStatement(instance, worktree, options, report);
      if (problem_statement.text.trim() === '') throw new EnvgenError('internal', 'the problem statement came out empty');
      const environment = await buildInstanceEnvironment({
        home: options.home,
        repo: instance.repo,
        commit: instance.base_commit,
        sourceGitDir: repo.mirror,
      submodules: repo.submodules,
        instanceId: id,
        patch: instance.patch,
      });
      const task: Task = { instance_id: id, file_changes, problem_statement, environment, image_name: options.imageName };
      options.pool.putTask(task);
      report.built += 1;
      options.onProgress?.({ kind: 'done', instanceId: id, ok: true });
    } catch (error) {
      logger.warn(`task of ${id} not built: ${describeError(error)}`, { instance: id });
      report.failed.push({ instance_id: id, error: describeError(error) });
      options.onProgress?.({ kind: 'done', instanceId: id, ok: false });
    }
  };
  // Each lane patches its own checkout while it captures failure output; lane 0 uses the given one.
  const lanes = Math.max(1, Math.min(options.concurrency ?? 1, instances.length));
  const copies: string[] = [];
  try {
    for (let lane = 1; lane < lanes; lane += 1) {
      const copy = await mkdtemp(join(tmpdir(), 'envgen-task-lane-'));
      copies.push(copy);
      await cp(repo.worktree, copy, { recursive: true, verbatimSymlinks: true, filter: (source) => basename(source) !== '.git' });
    }
    let next = 0;
    await Promise.all(
      [repo.worktree, ...copies].map(async (worktree) => {
        for (let index = next++; index < instances.length; index = next++) await build(instances[index] as Instance, worktree);
      }),
    );
  } finally {
    await Promise.all(copies.map((copy) => rm(copy, { recursive: true, force: true })));
  }
  report.failed.sort((a, b) => (a.instance_id < b.instance_id ? -1 : 1));
  report.seconds = (performance.now() - started) / 1000;
  return report;
}

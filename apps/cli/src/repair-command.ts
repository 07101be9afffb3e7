import type { Settings } from '@envgen/config';
import { EnvgenError } from '@envgen/core';
import type { Instance, Logger } from '@envgen/core';
import { openPool } from '@envgen/pool';
import { runRepairRollout } from '@envgen/selfplay';
import type { RepairFailureKind, SelfPlayTrajectory } from '@envgen/selfplay';
import { checkoutRepo, resolveProfile } from './env-command.js';
import type { Progress } from './progress.js';
import { createJsonlAppender, makeRunId, openModelClient, runInLanes, runTotals, trajectoryFile } from './run-command.js';
import type { ModelFlags, RunTotals } from './run-command.js';

/** Options of `envgen run --task repair`. */
export interface RepairRunOptions extends Partial<ModelFlags> {
  /** The repo the instances were injected into, as `--repo` of `envgen inject` takes it. */
  repo?: string;
  strategy?: string;
  limit?: number;
  attempts?: number;
  maxTurns?: number;
  concurrency?: number;
  out?: string;
  runId?: string;
}

/** What `envgen run --task repair` did. */
export interface RepairRunReport extends RunTotals {
  task: 'repair';
  model: string;
  /** Why scored repairs failed, by kind. */
  failures: Partial<Record<RepairFailureKind, number>>;
  finish: Record<SelfPlayTrajectory['finish']['reason'], number>;
}

/** Repair rollouts at once by default: each runs the suite at its end. */
const REPAIR_CONCURRENCY = 4;

/**
 * `envgen run --task repair`: the repair solver (terminal, str_replace_editor, submit) on the
 * repo's instances, each on a fresh checkout holding the bug and the weakening with no history,
 * its patch scored by the repair reward in a fresh sandbox and recorded in the pool; works on
 * any instance with a bundle (procedural, LLM-injected, higher-order).
 */
export async function runRepairRun(options: RepairRunOptions, settings: Settings, logger: Logger, progress: Progress, env: Record<string, string | undefined> = {}): Promise<RepairRunReport> {
  if (options.repo === undefined) {
    throw new EnvgenError('usage', '--task repair needs --repo REPO (as envgen inject took it, e.g. debian:toolz): the patches are evaluated against a clean checkout of it');
  }
  if (options.model === undefined) {
    throw new EnvgenError('usage', 'the repair solver needs a model: pass --model NAME and --base-url URL of an OpenAI-compatible server (e.g. vLLM)');
  }
  const attempts = options.attempts ?? 1;
  if (attempts < 1) throw new EnvgenError('usage', '--attempts must be at least 1');
  const client = await openModelClient({ ...options, model: options.model }, env, progress);
  const { provider, repo, worktree } = await checkoutRepo(options.repo, settings, logger, progress);
  const pool = openPool(settings.home, { logger });
  const started = performance.now();
  try {
    progress.phase('detecting the test profile');
    const profile = await resolveProfile(worktree.path, repo, settings, provider);
    const name = `${repo.owner}/${repo.name}`;
    const instances: Instance[] = [];
    for (const entry of pool.listInstances({ repo: name, ...(options.strategy === undefined ? {} : { strategy: options.strategy }) })) {
      if (entry.instance.base_commit === repo.commit) instances.push(entry.instance);
      if (options.limit !== undefined && instances.length >= options.limit) break;
    }
    if (instances.length === 0) {
      throw new EnvgenError('usage', `no instance of ${name}@${repo.commit.slice(0, 8)}${options.strategy === undefined ? '' : ` made by ${options.strategy}`} in the pool at ${settings.home}; make some with: envgen inject --repo ${options.repo}`);
    }
    const runId = options.runId ?? makeRunId('repair');
    const file = await trajectoryFile(options.out, settings, runId);
    const append = createJsonlAppender(file);
    const jobs = instances.flatMap((instance) => Array.from({ length: attempts }, () => instance));
    const trajectories: SelfPlayTrajectory[] = [];
    progress.phase('repair rollouts', jobs.length);
    await runInLanes(jobs, options.concurrency ?? REPAIR_CONCURRENCY, async (instance) => {
      try {
        const { trajectory, evaluation } = await runRepairRollout({
          instance,
          bundle: pool.readBundle(instance.instance_id),
          worktree: worktree.path,
          profile,
          sandboxProvider: provider,
          client,
          runId,
          logger,
          ...(options.maxTurns === undefined ? {} : { maxTurns: options.maxTurns }),
          ...(settings.sandbox === 'docker' ? { image: settings.dockerImage } : {}),
        });
        if (trajectory.finish.reason !== 'error') pool.recordAttempt(instance.instance_id, { reward: evaluation.reward, solved: evaluation.reward === 1 });
        trajectories.push(trajectory);
        await append(trajectory);
      } finally {
        progress.tick();
      }
    });
    return summarizeRepairRun(runId, client.model, file, instances.length, trajectories, (performance.now() - started) / 1000);
  } finally {
    pool.close();
    await worktree.remove();
  }
}

/** Sums up repair trajectories: rollouts whose endpoint failed count apart and are not scored. */
export function summarizeRepairRun(runId: string, model: string, file: string, instances: number, trajectories: readonly SelfPlayTrajectory[], seconds: number): RepairRunReport {
  const scored = trajectories.filter((trajectory) => trajectory.finish.reason !== 'error');
  const finish = { submit: 0, max_turns: 0, max_tokens: 0, wall_time: 0, error: 0 };
  const failures: RepairRunReport['failures'] = {};
  let rewardSum = 0;
  let solved = 0;
  for (const trajectory of trajectories) finish[trajectory.finish.reason] += 1;
  for (const trajectory of scored) {
    rewardSum += trajectory.reward ?? 0;
    if (trajectory.reward === 1) solved += 1;
    const kind = trajectory.evaluation?.failure?.kind;
    if (kind !== undefined) failures[kind] = (failures[kind] ?? 0) + 1;
  }
  return {
    ...runTotals({ runId, file, instances, trajectories, scored, seconds }),
    task: 'repair',
    model,
    meanReward: scored.length === 0 ? null : rewardSum / scored.length,
    solveRate: scored.length === 0 ? null : solved / scored.length,
    failures,
    finish,
  };
}

/** The human summary of a repair run. */
export function formatRepairReport(report: RepairRunReport): string {
  const failures = Object.entries(report.failures).map(([kind, count]) => `${count} ${kind}`).join(', ');
  const { finish } = report;
  return [
    `run ${report.runId}: ${report.rollouts} repair rollout(s) on ${report.instances} instance(s) with ${report.model} in ${report.seconds.toFixed(1)} s`,
    `  mean reward   ${report.meanReward === null ? '–' : report.meanReward.toFixed(3)} (±1 each)`,
    `  solve rate    ${report.solveRate === null ? '–' : `${(100 * report.solveRate).toFixed(1)}%`}`,
    `  failures      ${failures || 'none'}`,
    `  episodes      ${finish.submit} submitted, ${finish.max_turns} out of turns, ${finish.max_tokens + finish.wall_time} over budget, ${finish.error} model errors (not recorded)`,
    ...(report.usage.total_tokens > 0 ? [`  tokens        ${report.usage.total_tokens} (${report.usage.prompt_tokens} prompt, ${report.usage.completion_tokens} completion)`] : []),
    `  trajectories  ${report.trajectories}`,
  ].join('\n');
}

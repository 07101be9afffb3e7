import { describeError, silentLogger } from '@envgen/core';
import type { Logger } from '@envgen/core';
import type { GrowthRound, Pool } from '@envgen/pool';
import { finishRound } from './finish-round.js';
import type { RepoOutcome } from './finish-round.js';
import type { RoundPlan } from './plan-round.js';
import { processInject, processRollouts, processTasks } from './round-jobs.js';
import type { GrowServices, InjectResult, TasksResult } from './round-jobs.js';

/** A round's stages, as progress reports them. */
export type RoundStage = 'inject' | 'tasks' | 'rollouts' | 'write';

/** A job of a round started, ended or failed (after its retries). */
export interface RoundEvent {
  stage: RoundStage;
  repo: string;
  state: 'active' | 'completed' | 'failed';
  detail?: string;
}

/** Options of {@link runRoundInProcess}. */
export interface RunInProcessOptions {
  pool: Pool;
  services: GrowServices;
  /** Tries per job before it fails with its reason (default 2), as the queue retries. */
  attempts?: number;
  logger?: Logger;
  onEvent?: (event: RoundEvent) => void;
}

/** The jobs a round plan becomes, per stage: what progress bars count. */
export function countJobs(plan: RoundPlan): Record<RoundStage, number> {
  return { inject: plan.repos.reduce((sum, repo) => sum + repo.shards.length, 0), tasks: plan.repos.length, rollouts: plan.repos.length, write: 1 };
}

/**
 * Runs a planned round in this process with the same job code the queue's workers run: per
 * repo its inject shards, then its tasks, then its rollouts; a job that keeps failing is
 * reported with its reason and the round goes on; then the writer stores everything.
 */
export async function runRoundInProcess(plan: RoundPlan, options: RunInProcessOptions): Promise<GrowthRound> {
  const { pool, services } = options;
  const logger = options.logger ?? silentLogger;
  const attempts = Math.max(1, options.attempts ?? 2);
  const emit = options.onEvent ?? (() => undefined);
  pool.putRound(plan.round);
  const run = async <T>(stage: RoundStage, repo: string, job: () => Promise<T>): Promise<{ value: T } | { failure: string }> => {
    emit({ stage, repo, state: 'active' });
    let reason = '';
    for (let attempt = 1; attempt <= attempts; attempt += 1) {
      try {
        const value = await job();
        emit({ stage, repo, state: 'completed' });
        return { value };
      } catch (error) {
        reason = describeError(error);
        logger.warn(`round ${plan.round.roundId}: ${stage} job of ${repo} failed (try ${attempt} of ${attempts}): ${reason}`);
      }
    }
    emit({ stage, repo, state: 'failed', detail: reason });
    return { failure: `${stage}: ${reason}` };
  };
  const outcomes: RepoOutcome[] = [];
  for (const work of plan.repos) {
    const common = { roundId: plan.round.roundId, repo: work.repo, spec: work.spec };
    const shards: InjectResult[] = [];
    const failedShards: string[] = [];
    for (const { shard, quotas } of work.shards) {
      const done = await run('inject', work.repo, () => processInject({ kind: 'inject', ...common, shard, seed: plan.round.seed, quotas }, services));
      if ('value' in done) shards.push(done.value);
      else failedShards.push(`shard ${shard}: ${done.failure}`);
    }
    const tasks = await run('tasks', work.repo, () => processTasks({ kind: 'tasks', ...common }, shards, failedShards, services));
    const tasksResult: TasksResult | undefined = 'value' in tasks ? tasks.value : undefined;
    const rolloutsData = { kind: 'rollouts' as const, ...common, rollouts: plan.round.rollouts, solver: plan.solver, revisit: work.revisit };
    const rollouts = await run('rollouts', work.repo, () => processRollouts(rolloutsData, tasksResult, 'failure' in tasks ? [tasks.failure] : [], services));
    outcomes.push({ repo: work.repo, spec: work.spec, result: 'value' in rollouts ? rollouts.value : null, failure: 'failure' in rollouts ? rollouts.failure : null });
  }
  emit({ stage: 'write', repo: '', state: 'active' });
  const finished = await finishRound(plan.round, outcomes, pool, services, logger);
  emit({ stage: 'write', repo: '', state: 'completed' });
  return finished;
}

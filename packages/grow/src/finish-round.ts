import { describeError, silentLogger } from '@envgen/core';
import type { Logger } from '@envgen/core';
import type { Band, GrowthRound, Pool, RoundRepoResult } from '@envgen/pool';
import type { GrowServices, RolloutsResult } from './round-jobs.js';

/** What came back for one repo of a round: its rollouts job's result, or why its jobs failed. */
export interface RepoOutcome {
  repo: string;
  spec: string;
  result: RolloutsResult | null;
  /** Why the repo's jobs failed after their retries (its rollouts job, or the jobs under it). */
  failure: string | null;
}

function bandOf(attempts: number, solved: number, minAttempts: number): Band {
  if (attempts < minAttempts) return 'untried';
  return solved === 0 ? 'too-hard' : solved === attempts ? 'too-easy' : 'frontier';
}

/**
 * The pool host's writer: stores every instance, task and outcome a round's jobs sent back,
 * idempotently (instance ids derive from the patch, outcome keys from round, instance and
 * attempt), so a job delivered twice, or this writer re-run after a crash, writes each once.
 * Then stores the round with what it produced.
 */
export async function finishRound(round: GrowthRound, outcomes: readonly RepoOutcome[], pool: Pool, services: GrowServices, logger: Logger = silentLogger): Promise<GrowthRound> {
  const newIds = new Set<string>();
  const repos: RoundRepoResult[] = [];
  let duplicateOutcomes = 0;
  let rolloutsRun = 0;
  let tokens = 0;
  const revisited = new Set<string>();
  for (const outcome of [...outcomes].sort((a, b) => (a.repo < b.repo ? -1 : 1))) {
    const result = outcome.result;
    const repoNew = new Set<string>();
    let tasksBuilt = 0;
    let failure = outcome.failure;
    if (result !== null) {
      for (const item of result.instances) {
        const added = pool.addInstance(item.instance, item.bundle);
        if (added.status === 'added') repoNew.add(item.instance.instance_id);
      }
      const instances = new Map(result.instances.map((item) => [item.instance.instance_id, item.instance]));
      for (const task of result.tasks) {
        const instance = instances.get(task.instance_id);
        if (instance === undefined || !pool.hasInstance(task.instance_id) || pool.getTask(task.instance_id) !== undefined) continue;
        try {
          pool.putTask(await services.localizeTask(outcome.spec, instance, task));
          tasksBuilt += 1;
        } catch (error) {
          logger.warn(`round ${round.roundId}: the task of ${task.instance_id} could not be stored: ${describeError(error)}`, { instance: task.instance_id });
        }
      }
      for (const rollout of result.outcomes) {
        const recorded = pool.recordAttemptOnce(rollout.key, rollout.instanceId, { reward: rollout.reward, solved: rollout.solved });
        if (recorded.status === 'duplicate') duplicateOutcomes += 1;
        if (!instances.has(rollout.instanceId)) revisited.add(rollout.instanceId);
      }
      rolloutsRun += result.outcomes.length;
      tokens += result.tokens;
      const partial = [...result.failedShards, ...result.failedTasks.map((entry) => `task of ${entry.instance_id}: ${entry.error}`)];
      if (failure === null && partial.length > 0) failure = partial.join('; ');
    }
    for (const id of repoNew) newIds.add(id);
    repos.push({
      repo: outcome.repo,
      newInstances: repoNew.size,
      tasksBuilt,
      rollouts: result?.outcomes.length ?? 0,
      failed: failure,
      injectSeconds: result?.injectSeconds ?? 0,
    });
  }
  const bands: Record<Band, number> = { untried: 0, 'too-hard': 0, frontier: 0, 'too-easy': 0 };
  for (const id of newIds) {
    const stats = pool.stats(id);
    if (stats !== undefined) bands[bandOf(stats.attempts, stats.solved, round.minAttempts)] += 1;
  }
  const finishedAt = new Date();
  const seconds = (finishedAt.getTime() - Date.parse(round.startedAt)) / 1000;
  const finished: GrowthRound = {
    ...round,
    status: outcomes.length > 0 && outcomes.every((outcome) => outcome.result === null) ? 'failed' : 'done',
    finishedAt: finishedAt.toISOString(),
    arms: outcomes.flatMap((outcome) => outcome.result?.arms ?? []),
    repos,
    bands,
    newInstances: newIds.size,
    revisited: revisited.size,
    rolloutsRun,
    duplicateOutcomes,
    tokens,
    seconds,
    secondsPerKept: newIds.size === 0 ? null : seconds / newIds.size,
  };
  pool.putRound(finished);
  return finished;
}

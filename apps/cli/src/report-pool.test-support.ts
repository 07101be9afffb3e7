import type { RejectionReason } from '@envgen/core';
import { openPool } from '@envgen/pool';
import { fillSyntheticPool, makeSyntheticInstance } from '@envgen/pool/test-support';
import type { GrowthRound } from '@envgen/pool';
import { recordRun } from './run-records.js';

const DAY = 86_400_000;
const START = Date.UTC(2025, 0, 1);
const REASONS: readonly RejectionReason[] = ['no-failing-test', 'no-failing-test', 'timeout', 'no-passing-test', 'check-failed'];

/**
 * The outcomes of synthetic instance `index`: every fifth untried, the others 1 to 4
 * attempts with a solved count spread over all of 0…attempts (too hard, frontier, too easy).
 */
export function syntheticOutcomes(index: number): Array<{ reward: number; solved: boolean }> {
  if (index % 5 === 0) return [];
  const attempts = 1 + (index % 4);
  const solved = (index * 7) % (attempts + 1);
  return Array.from({ length: attempts }, (_, attempt) => ({ reward: attempt < solved ? 3 : (index % 3) * 0.5, solved: attempt < solved }));
}

/** Options of {@link fillReportPool}. */
export interface FillReportPoolOptions {
  /** Days the instances' creation times spread over (default 30). */
  days?: number;
  /** Growth rounds to store, as `envgen grow` does (default none). */
  rounds?: GrowthRound[];
}

/**
 * A pool for the report: `instances` synthetic instances with tasks, made over `days` days,
 * with outcomes ({@link syntheticOutcomes}), a rejection per three instances, an inject run
 * record per day and repo, two solver runs, and growth rounds when given.
 */
export function fillReportPool(home: string, instances: number, options: FillReportPoolOptions = {}): void {
  const days = options.days ?? 30;
  const createdAt = (index: number) => new Date(START + Math.floor((index * days * DAY) / instances)).toISOString();
  fillSyntheticPool(home, instances, 0, undefined, (index) => ({ created_at: createdAt(index) }));
  const pool = openPool(home);
  try {
    for (let index = 0; index < instances; index += 1) {
      const id = makeSyntheticInstance(index).instance_id;
      for (const outcome of syntheticOutcomes(index)) pool.recordAttempt(id, outcome);
      if (index % 3 === 0) {
        const instance = makeSyntheticInstance(index);
        const reason = REASONS[index % REASONS.length] ?? 'timeout';
        pool.markRejected({ repo: instance.repo, commit: instance.base_commit, profileHash: 'p', patchHash: `rejected-${index}` }, reason, `synthetic rejection ${index}`);
      }
    }
  } finally {
    pool.close();
  }
  for (let day = 0; day < days; day += 1) {
    for (const [offset, repo] of ['pytoolz/toolz', 'uiri/toml'].entries()) {
      const kept = Math.round(instances / days / 2);
      recordRun(home, 'inject', {
        finishedAt: new Date(START + day * DAY + offset * 60_000 + 3_600_000).toISOString(),
        repo,
        seed: day,
        tried: kept + 7 + (day % 5),
        kept,
        known: 2,
        rejected: { 'no-failing-test': 4 + (day % 5), timeout: 1 },
        byStrategy: {
          change_operator: { tried: Math.floor(kept / 2) + 4, kept: Math.floor(kept / 2), known: 1, rejected: 3 },
          invert_if_else: { tried: Math.ceil(kept / 2) + 3 + (day % 5), kept: Math.ceil(kept / 2), known: 1, rejected: 2 + (day % 5) },
        },
        seconds: 20 + day,
        secondsPerKept: kept === 0 ? null : (20 + day) / kept,
      });
    }
  }
  const solverRun = (solver: string, model: string | null, levels: { file: number; module: number; entity: number }, at: number) =>
    recordRun(home, 'solver', {
      finishedAt: new Date(START + at * DAY).toISOString(),
      runId: `run-${solver}-${at}`,
      solver,
      model,
      scored: 100,
      meanReward: levels.file + levels.module + levels.entity,
      solveRate: levels.entity,
      levels,
      seconds: 12,
    });
  solverRun('baseline', null, { file: 0.8, module: 0.45, entity: 0.35 }, 1);
  solverRun('agent', 'OpenHands/CodeScout-1.7B', { file: 0.9, module: 0.62, entity: 0.55 }, 2);
  if (options.rounds !== undefined) storeRounds(home, options.rounds);
}

/** Stores `rounds` in the pool, as `envgen grow` does. */
export function storeRounds(home: string, rounds: readonly GrowthRound[]): void {
  const pool = openPool(home);
  try {
    for (const round of rounds) pool.putRound(round);
  } finally {
    pool.close();
  }
}

/** `count` finished growth rounds over two repos and two strategies, the plan moving toward toml over time. */
export function makeSyntheticRounds(count: number): GrowthRound[] {
  return Array.from({ length: count }, (_, index) => {
    const toml = 20 + index * 5;
    const arm = (repo: string, strategy: string, candidates: number, reason: string) => ({ repo, strategy, candidates, floor: 1, pBest: 0.5, value: 0.5, reason });
    const plan = [
      arm('pytoolz/toolz', 'change_operator', 60 - index * 3, 'yield 0.8, frontier share 0.2'),
      arm('pytoolz/toolz', 'invert_if_else', 20, 'exploration floor'),
      arm('uiri/toml', 'change_operator', toml, `frontier share ${(0.3 + index / 20).toFixed(2)}`),
    ];
    const candidates = plan.reduce((sum, entry) => sum + entry.candidates, 0);
    const kept = Math.round(candidates * (0.6 + (index % 3) / 10));
    const startedAt = new Date(START + index * DAY + 7_200_000).toISOString();
    const seconds = kept * (0.3 + (index % 4) / 10);
    return {
      roundId: `r${index + 1}`,
      seed: index,
      status: 'done',
      startedAt,
      finishedAt: startedAt,
      budget: candidates,
      rollouts: 2,
      minAttempts: 2,
      solver: 'baseline',
      plan,
      arms: plan.map(({ repo, strategy, candidates: tried }) => ({ repo, strategy, candidates: tried, kept: 0, known: 0, rejected: 0 })),
      repos: [],
      bands: { untried: 0, 'too-hard': 0, frontier: 0, 'too-easy': kept },
      newInstances: kept,
      revisited: 0,
      rolloutsRun: kept * 2,
      duplicateOutcomes: 0,
      tokens: 0,
      seconds,
      secondsPerKept: seconds / kept,
    };
  });
}

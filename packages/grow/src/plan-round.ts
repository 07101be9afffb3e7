import { EnvgenError } from '@envgen/core';
import type { Pool, GrowthRound } from '@envgen/pool';
import { allocateBudget } from './allocate.js';
import { collectArmStats } from './arm-stats.js';
import type { Arm, ArmTally } from './arm-stats.js';
import type { SolverItem, SolverSpec } from './round-jobs.js';

/** Options of {@link planRound}. */
export interface PlanRoundOptions {
  roundId: string;
  seed: number;
  /** Candidates to split over the arms. */
  budget: number;
  /** Solver rollouts per instance. */
  rollouts: number;
  /** Attempts before an instance has a band (default: `rollouts`). */
  minAttempts?: number;
  /** Earlier instances the solver runs on again, at most (default 20): unbanded ones and frontier ones with few attempts. */
  revisit?: number;
  /** The strategies whose (repo, strategy) arms the budget is split over. */
  strategies: readonly string[];
  solver: SolverSpec;
  /** Exploration share of the budget (see allocateBudget). */
  explore?: number;
  /** Candidates per inject shard at most (default 25): a repo's arms are split into this many jobs. */
  shardCandidates?: number;
}

/** One repo's work in a round. */
export interface RepoWork {
  repo: string;
  spec: string;
  shards: Array<{ shard: number; quotas: Record<string, number> }>;
  revisit: SolverItem[];
}

/** A planned round: the stored record (status `running`) and the jobs to run. */
export interface RoundPlan {
  round: GrowthRound;
  repos: RepoWork[];
  solver: SolverSpec;
}

/** A frontier instance stays worth revisiting until it has this many times the minimum attempts. */
const FRONTIER_ATTEMPTS_FACTOR = 4;

/** Splits a repo's arm quotas into shards of at most `size` candidates: arms largest first, each to the emptiest shard. */
function shardQuotas(quotas: ReadonlyArray<{ strategy: string; candidates: number }>, size: number): Array<Record<string, number>> {
  const total = quotas.reduce((sum, entry) => sum + entry.candidates, 0);
  const count = Math.max(1, Math.min(quotas.length, Math.ceil(total / Math.max(1, size))));
  const shards = Array.from({ length: count }, () => ({ load: 0, quotas: {} as Record<string, number> }));
  for (const entry of [...quotas].sort((a, b) => b.candidates - a.candidates || (a.strategy < b.strategy ? -1 : 1))) {
    const target = shards.reduce((best, shard) => (shard.load < best.load ? shard : best));
    target.quotas[entry.strategy] = entry.candidates;
    target.load += entry.candidates;
  }
  return shards.filter((shard) => shard.load > 0).map((shard) => shard.quotas);
}

/** Earlier instances of `repo` with a task whose band is unsettled or on the frontier with few attempts, fewest attempts first. */
function selectRevisits(pool: Pool, repo: string, minAttempts: number, limit: number): SolverItem[] {
  const found: Array<SolverItem & { attempts: number }> = [];
  for (const entry of pool.listInstances({ repo, hasTask: true, bands: ['untried', 'frontier'], minAttempts })) {
    if (entry.task === null || entry.stats.attempts >= FRONTIER_ATTEMPTS_FACTOR * minAttempts) continue;
    found.push({ instance: entry.instance, task: entry.task, attempts: entry.stats.attempts });
  }
  found.sort((a, b) => a.attempts - b.attempts || (a.instance.instance_id < b.instance.instance_id ? -1 : 1));
  return found.slice(0, limit).map(({ instance, task }) => ({ instance, task }));
}

/**
 * Plans a growth round from the pool: the registered repos × `strategies` are the arms, their
 * stats come from earlier rounds (yield) and the pool's outcomes (solve rates), the budget is
 * split by {@link allocateBudget}, each repo's arms are cut into inject shards, and earlier
 * instances worth another rollout are picked.
 */
export function planRound(pool: Pool, options: PlanRoundOptions): RoundPlan {
  const repos = pool.listRepos();
  if (repos.length === 0) throw new EnvgenError('usage', 'no repo is registered for growth; add one with: envgen repos add debian:toolz');
  const minAttempts = Math.max(1, options.minAttempts ?? options.rollouts);
  const arms: Arm[] = repos.flatMap((repo) => options.strategies.map((strategy) => ({ repo: repo.repo, strategy })));
  const tallies: ArmTally[] = pool
    .listRounds()
    .filter((round) => round.status === 'done')
    .flatMap((round) => round.arms.map((arm) => ({ repo: arm.repo, strategy: arm.strategy, candidates: arm.candidates, kept: arm.kept + arm.known })));
  const stats = collectArmStats(arms, tallies, pool.armOutcomes(), { minAttempts });
  const plan = allocateBudget(stats, {
    budget: options.budget,
    seed: options.seed,
    weights: Object.fromEntries(repos.map((repo) => [repo.repo, repo.weight])),
    ...(options.explore === undefined ? {} : { explore: options.explore }),
  });
  const work: RepoWork[] = repos.map((registered) => {
    const quotas = plan.filter((entry) => entry.repo === registered.repo && entry.candidates > 0).map(({ strategy, candidates }) => ({ strategy, candidates }));
    return {
      repo: registered.repo,
      spec: registered.spec,
      shards: shardQuotas(quotas, options.shardCandidates ?? 25).map((shardQuota, shard) => ({ shard, quotas: shardQuota })),
      revisit: selectRevisits(pool, registered.repo, minAttempts, options.revisit ?? 20),
    };
  });
  const round: GrowthRound = {
    roundId: options.roundId,
    seed: options.seed,
    status: 'running',
    startedAt: new Date().toISOString(),
    finishedAt: null,
    budget: options.budget,
    rollouts: options.rollouts,
    minAttempts,
    solver: options.solver.kind === 'baseline' ? 'baseline' : options.solver.model,
    plan: plan.map(({ repo, strategy, candidates, floor, pBest, value, reason }) => ({ repo, strategy, candidates, floor, pBest, value, reason })),
    arms: [],
    repos: [],
    bands: { untried: 0, 'too-hard': 0, frontier: 0, 'too-easy': 0 },
    newInstances: 0,
    revisited: 0,
    rolloutsRun: 0,
    duplicateOutcomes: 0,
    tokens: 0,
    seconds: 0,
    secondsPerKept: null,
  };
  return { round, repos: work, solver: options.solver };
}

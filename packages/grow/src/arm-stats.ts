import { injectorReward } from '@envgen/rewards';
import type { ArmStats } from './allocate.js';

/** An arm: a (repo, strategy) pair. */
export interface Arm {
  /** `owner/name`. */
  repo: string;
  strategy: string;
}

/** What one earlier round did on one arm. */
export interface ArmTally extends Arm {
  candidates: number;
  /** New instances plus candidates the pool already held. */
  kept: number;
}

/** How many of an arm's instances have this many attempts and solves (the pool's outcome counts). */
export interface OutcomeGroup extends Arm {
  attempts: number;
  solved: number;
  instances: number;
}

/** Options of {@link collectArmStats}. */
export interface CollectArmStatsOptions {
  /** Attempts an instance needs before its solve rate counts (default 1). */
  minAttempts?: number;
  alpha?: number;
}

const armKey = (arm: Arm): string => `${arm.repo}\u0000${arm.strategy}`;

/**
 * The stats {@link allocateBudget} reads, per arm: candidates and kept summed over earlier
 * rounds' tallies, and the injector reward of each instance with at least `minAttempts`
 * attempts (its solve rate `solved / attempts`). Arms absent from the tallies and outcomes
 * start at zero.
 */
export function collectArmStats(arms: readonly Arm[], tallies: readonly ArmTally[], outcomes: readonly OutcomeGroup[], options: CollectArmStatsOptions = {}): ArmStats[] {
  const minAttempts = Math.max(1, options.minAttempts ?? 1);
  const stats = new Map<string, ArmStats>(arms.map((arm) => [armKey(arm), { repo: arm.repo, strategy: arm.strategy, candidates: 0, kept: 0, scored: 0, rewardSum: 0 }]));
  for (const tally of tallies) {
    const entry = stats.get(armKey(tally));
    if (entry === undefined) continue;
    entry.candidates += tally.candidates;
    entry.kept += tally.kept;
  }
  for (const group of outcomes) {
    const entry = stats.get(armKey(group));
    if (entry === undefined || group.attempts < minAttempts) continue;
    const reward = injectorReward({ checksPassed: true, solveRate: group.solved / group.attempts }, options.alpha === undefined ? {} : { alpha: options.alpha });
    entry.scored += group.instances;
    entry.rewardSum += reward * group.instances;
  }
  return [...stats.values()];
}

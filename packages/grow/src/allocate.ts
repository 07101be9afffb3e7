import { EnvgenError, createRng } from '@envgen/core';
import { DEFAULT_INJECTOR_ALPHA } from '@envgen/rewards';
import { sampleBeta } from './sample-beta.js';

/** What the pool and earlier rounds know about one (repo, strategy) arm. */
export interface ArmStats {
  /** `owner/name`. */
  repo: string;
  strategy: string;
  /** Candidates the arm tried in earlier rounds. */
  candidates: number;
  /** Of those, how many became instances (new or already in the pool). */
  kept: number;
  /** The arm's instances with enough attempts to have a band, and the sum of their injector rewards. */
  scored: number;
  rewardSum: number;
}

/** Options of {@link allocateBudget}. */
export interface AllocateOptions {
  /** Candidates to split over the arms. */
  budget: number;
  /** Same stats and seed, same plan. */
  seed: number | string;
  /** Weight of each repo (`owner/name`), default 1: multiplies its arms' share of the sampled part. */
  weights?: Readonly<Record<string, number>>;
  /** Fraction of the budget spread evenly over every arm before sampling (default 0.2): the exploration floor. */
  explore?: number;
  /** α of the injector reward (default 0.8): its range is [-α, 1]. */
  alpha?: number;
  /** Thompson draws estimating each arm's chance to be the best (default 2000). */
  draws?: number;
}

/** One arm's share of a round's budget, with why. */
export interface ArmPlan {
  repo: string;
  strategy: string;
  /** Candidates to try this round: the floor plus the sampled share. */
  candidates: number;
  floor: number;
  /** Fraction of the Thompson draws in which this arm had the highest value. */
  pBest: number;
  /** Posterior means: yield, mean injector reward of its instances, and their product (the value per candidate). */
  yieldMean: number;
  rewardMean: number;
  value: number;
  reason: string;
}

/** The default exploration share of a round's budget. */
export const DEFAULT_EXPLORE = 0.2;

function compareArms(a: { repo: string; strategy: string }, b: { repo: string; strategy: string }): number {
  return a.repo === b.repo ? (a.strategy < b.strategy ? -1 : a.strategy > b.strategy ? 1 : 0) : a.repo < b.repo ? -1 : 1;
}

/** Splits `total` by `shares` into integers that sum to `total` (largest remainder; ties to the earlier index). */
function apportion(total: number, shares: readonly number[]): number[] {
  const sum = shares.reduce((acc, share) => acc + share, 0);
  if (total <= 0 || sum <= 0) return shares.map(() => 0);
  const exact = shares.map((share) => (total * share) / sum);
  const counts = exact.map(Math.floor);
  const left = total - counts.reduce((acc, count) => acc + count, 0);
  const order = exact.map((x, index) => ({ index, rest: x - Math.floor(x) })).sort((a, b) => b.rest - a.rest || a.index - b.index);
  for (let k = 0; k < left; k += 1) {
    const slot = order[k % order.length];
    if (slot !== undefined) counts[slot.index] = (counts[slot.index] ?? 0) + 1;
  }
  return counts;
}

/**
 * The growth round's allocation policy: splits `budget` candidates over the arms, a pure
 * function of their stats and the seed.
 *
 * An arm's value per candidate is its yield × the mean injector reward of its instances
 * (DESIGN.md: `1 − (1+α)·s` on the frontier, `−α` at solve rate 0 or 1), so arms whose bugs
 * land between "never solved" and "always solved" are worth the most. Both factors have a
 * Beta posterior: yield ~ Beta(1 + kept, 1 + rejected); the injector reward, mapped onto
 * [0, 1] as `u = (r + α) / (1 + α)`, ~ Beta(1 + Σu, 1 + Σ(1 − u)) over the scored instances.
 *
 * 1. Exploration floor: `explore × budget` is spread evenly, at least one candidate per arm,
 *    so new repos and rare strategies are never starved. When the budget is smaller than the
 *    arms, the arms tried least get the floor first (ties broken by the seed).
 * 2. Thompson sampling: `draws` times, each arm's value is sampled from its posteriors; an
 *    arm's share of the rest of the budget is the fraction of draws it wins, times its repo's
 *    weight; integers by largest remainder.
 */
export function allocateBudget(arms: readonly ArmStats[], options: AllocateOptions): ArmPlan[] {
  const { budget } = options;
  if (!Number.isInteger(budget) || budget < 0) throw new EnvgenError('usage', `the budget must be a whole number of candidates ≥ 0, got ${budget}`);
  const explore = options.explore ?? DEFAULT_EXPLORE;
  if (!(explore >= 0 && explore <= 1)) throw new EnvgenError('usage', `the exploration share must be between 0 and 1, got ${explore}`);
  const alpha = options.alpha ?? DEFAULT_INJECTOR_ALPHA;
  const draws = options.draws ?? 2000;
  const sorted = [...arms].sort(compareArms);
  if (sorted.length === 0) return [];
  const rng = createRng(`${options.seed}/allocate`);

  const floors = sorted.map(() => 0);
  const perArm = Math.max(1, Math.floor((explore * budget) / sorted.length));
  if (perArm * sorted.length <= budget) floors.fill(perArm);
  else {
    const tieBreak = sorted.map(() => rng.next());
    const order = sorted.map((arm, index) => index).sort((a, b) => (sorted[a]?.candidates ?? 0) - (sorted[b]?.candidates ?? 0) || (tieBreak[a] ?? 0) - (tieBreak[b] ?? 0));
    for (const index of order.slice(0, budget)) floors[index] = 1;
  }

  const posteriors = sorted.map((arm) => {
    const sumU = (arm.rewardSum + alpha * arm.scored) / (1 + alpha);
    return { yieldA: 1 + arm.kept, yieldB: 1 + Math.max(0, arm.candidates - arm.kept), rewardA: 1 + sumU, rewardB: 1 + Math.max(0, arm.scored - sumU) };
  });
  const wins = sorted.map(() => 0);
  for (let draw = 0; draw < draws; draw += 1) {
    let best = -Infinity;
    let winner = 0;
    posteriors.forEach((p, index) => {
      const value = sampleBeta(p.yieldA, p.yieldB, rng) * (sampleBeta(p.rewardA, p.rewardB, rng) * (1 + alpha) - alpha);
      if (value > best) {
        best = value;
        winner = index;
      }
    });
    wins[winner] = (wins[winner] ?? 0) + 1;
  }
  const rest = budget - floors.reduce((acc, floor) => acc + floor, 0);
  const shares = sorted.map((arm, index) => ((wins[index] ?? 0) / draws) * (options.weights?.[arm.repo] ?? 1));
  const extra = apportion(rest, shares);

  return sorted.map((arm, index) => {
    const p = posteriors[index] as (typeof posteriors)[number];
    const yieldMean = p.yieldA / (p.yieldA + p.yieldB);
    const rewardMean = (p.rewardA / (p.rewardA + p.rewardB)) * (1 + alpha) - alpha;
    const floor = floors[index] ?? 0;
    const sampled = extra[index] ?? 0;
    const pBest = (wins[index] ?? 0) / draws;
    const known =
      arm.candidates === 0
        ? 'new arm'
        : `yield ${arm.kept}/${arm.candidates}, ${arm.scored === 0 ? 'no scored instance yet' : `mean injector reward ${(arm.rewardSum / arm.scored).toFixed(2)} over ${arm.scored} scored instance(s)`}`;
    return {
      repo: arm.repo,
      strategy: arm.strategy,
      candidates: floor + sampled,
      floor,
      pBest,
      yieldMean,
      rewardMean,
      value: yieldMean * rewardMean,
      reason: `${known}; floor ${floor} + ${sampled} sampled (best in ${(100 * pBest).toFixed(1)}% of draws)`,
    };
  });
}

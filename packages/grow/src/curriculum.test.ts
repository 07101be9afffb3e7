import { describe, expect, it } from 'vitest';
import { createRng } from '@envgen/core';
import { allocateBudget } from './allocate.js';
import { collectArmStats } from './arm-stats.js';
import type { Arm, ArmTally, OutcomeGroup } from './arm-stats.js';

/** A synthetic world: each strategy has a known yield and a known chance that the solver solves its bugs. */
const STRATEGIES = {
  too_hard: { yield: 0.9, solve: 0 },
  too_easy: { yield: 0.9, solve: 1 },
  frontier: { yield: 0.8, solve: 0.4 },
  rare_frontier: { yield: 0.25, solve: 0.5 },
} as const;
const ROUNDS = 20;
const BUDGET = 60;
const ROLLOUTS = 4;
const NEW_REPO_ROUND = 11;

describe('curriculum simulation', () => {
  it('moves the budget toward arms whose instances land on the frontier, and a new repo gets candidates in its first round', () => {
    const rng = createRng('simulation');
    const tallies: ArmTally[] = [];
    const outcomes: OutcomeGroup[] = [];
    const shares: Array<Record<string, number>> = [];
    let newRepoFirstPlan: number[] = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      const repos = round >= NEW_REPO_ROUND ? ['sim/one', 'sim/two'] : ['sim/one'];
      const arms: Arm[] = repos.flatMap((repo) => Object.keys(STRATEGIES).map((strategy) => ({ repo, strategy })));
      const stats = collectArmStats(arms, tallies, outcomes, { minAttempts: ROLLOUTS });
      const plan = allocateBudget(stats, { budget: BUDGET, seed: round });
      if (round === NEW_REPO_ROUND) newRepoFirstPlan = plan.filter((entry) => entry.repo === 'sim/two').map((entry) => entry.candidates);
      const share: Record<string, number> = {};
      for (const entry of plan) {
        share[entry.strategy] = (share[entry.strategy] ?? 0) + entry.candidates / BUDGET;
        const truth = STRATEGIES[entry.strategy as keyof typeof STRATEGIES];
        let kept = 0;
        for (let c = 0; c < entry.candidates; c += 1) {
          if (rng.next() >= truth.yield) continue;
          kept += 1;
          let solved = 0;
          for (let k = 0; k < ROLLOUTS; k += 1) if (rng.next() < truth.solve) solved += 1;
          outcomes.push({ repo: entry.repo, strategy: entry.strategy, attempts: ROLLOUTS, solved, instances: 1 });
        }
        tallies.push({ repo: entry.repo, strategy: entry.strategy, candidates: entry.candidates, kept });
      }
      shares.push(share);
    }
    const table = shares.map((share, index) => `round ${String(index + 1).padStart(2)}  ${Object.keys(STRATEGIES).map((name) => `${name} ${(100 * (share[name] ?? 0)).toFixed(0).padStart(3)}%`).join('  ')}`);
    process.stdout.write(`share of the budget per strategy (both repos)\n${table.join('\n')}\n`);

    const frontierShare = (share: Record<string, number>) => (share['frontier'] ?? 0) + (share['rare_frontier'] ?? 0);
    const last = shares.slice(-5);
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    expect(frontierShare(shares[0] as Record<string, number>)).toBeLessThan(0.6);
    expect(mean(last.map(frontierShare))).toBeGreaterThan(0.7);
    expect(mean(last.map((share) => share['frontier'] ?? 0))).toBeGreaterThan(mean(last.map((share) => share['too_easy'] ?? 0)) * 3);
    // Every arm of the new repo, and every arm at all, keeps a floor.
    expect(newRepoFirstPlan).toHaveLength(4);
    for (const candidates of newRepoFirstPlan) expect(candidates).toBeGreaterThanOrEqual(1);
    for (const share of last) for (const name of Object.keys(STRATEGIES)) expect(share[name]).toBeGreaterThan(0);
  });
});

import { describe, expect, it } from 'vitest';
import { allocateBudget } from './allocate.js';
import type { ArmStats } from './allocate.js';
import { collectArmStats } from './arm-stats.js';

const arm = (strategy: string, over: Partial<ArmStats> = {}): ArmStats => ({ repo: 'o/r', strategy, candidates: 0, kept: 0, scored: 0, rewardSum: 0, ...over });

describe('allocateBudget', () => {
  it('spends exactly the budget, and the same stats and seed give the same plan', () => {
    const arms = [arm('a', { candidates: 10, kept: 9, scored: 5, rewardSum: 2 }), arm('b', { candidates: 10, kept: 2 }), arm('c')];
    const first = allocateBudget(arms, { budget: 37, seed: 3 });
    expect(first.reduce((sum, plan) => sum + plan.candidates, 0)).toBe(37);
    expect(allocateBudget([...arms].reverse(), { budget: 37, seed: 3 })).toEqual(first);
    expect(allocateBudget(arms, { budget: 37, seed: 4 }).map((plan) => plan.candidates)).not.toEqual([]);
  });

  it('gives every arm its exploration floor and the rest mostly to the arm whose instances land on the frontier', () => {
    const frontier = arm('frontier', { candidates: 40, kept: 36, scored: 30, rewardSum: 30 * 0.46 }); // s ≈ 0.3
    const tooEasy = arm('too_easy', { candidates: 40, kept: 38, scored: 30, rewardSum: 30 * -0.8 });
    const barren = arm('barren', { candidates: 40, kept: 1 });
    const plan = allocateBudget([frontier, tooEasy, barren], { budget: 100, seed: 1 });
    const by = Object.fromEntries(plan.map((entry) => [entry.strategy, entry]));
    for (const entry of plan) expect(entry.floor).toBe(6);
    expect(by['frontier']?.candidates).toBeGreaterThan(80);
    expect(by['too_easy']?.candidates).toBeLessThan(10);
    expect(by['frontier']?.reason).toMatch(/yield 36\/40, mean injector reward 0\.46 over 30 scored instance/);
  });

  it('gives new arms a candidate first when the budget is smaller than the arms', () => {
    const arms = [...['a', 'b', 'c', 'd'].map((name) => arm(name, { candidates: 20, kept: 10 })), arm('new1'), arm('new2')];
    const plan = allocateBudget(arms, { budget: 3, seed: 9 });
    expect(plan.reduce((sum, entry) => sum + entry.candidates, 0)).toBe(3);
    expect(plan.find((entry) => entry.strategy === 'new1')?.floor).toBe(1);
    expect(plan.find((entry) => entry.strategy === 'new2')?.floor).toBe(1);
    expect(plan.find((entry) => entry.strategy === 'new1')?.reason).toMatch(/^new arm/);
  });

  it("weights a repo's sampled share", () => {
    const arms = [arm('x', { repo: 'a/a' }), arm('x', { repo: 'b/b' })];
    const plan = allocateBudget(arms, { budget: 100, seed: 2, explore: 0, weights: { 'a/a': 9 } });
    expect(plan[0]?.candidates).toBeGreaterThan(80);
  });

  it('rejects a bad budget or exploration share', () => {
    expect(() => allocateBudget([arm('a')], { budget: -1, seed: 0 })).toThrow(/budget/);
    expect(() => allocateBudget([arm('a')], { budget: 5, seed: 0, explore: 2 })).toThrow(/exploration/);
    expect(allocateBudget([], { budget: 5, seed: 0 })).toEqual([]);
  });
});

describe('collectArmStats', () => {
  it('sums tallies and scores only instances with enough attempts', () => {
    const stats = collectArmStats(
      [{ repo: 'o/r', strategy: 'a' }, { repo: 'o/r', strategy: 'b' }],
      [
        { repo: 'o/r', strategy: 'a', candidates: 5, kept: 4 },
        { repo: 'o/r', strategy: 'a', candidates: 5, kept: 3 },
        { repo: 'x/y', strategy: 'a', candidates: 9, kept: 9 },
      ],
      [
        { repo: 'o/r', strategy: 'a', attempts: 4, solved: 1, instances: 2 },
        { repo: 'o/r', strategy: 'a', attempts: 4, solved: 4, instances: 1 },
        { repo: 'o/r', strategy: 'a', attempts: 1, solved: 1, instances: 3 },
      ],
      { minAttempts: 4 },
    );
    expect(stats[0]).toMatchObject({ candidates: 10, kept: 7, scored: 3 });
    expect(stats[0]?.rewardSum).toBeCloseTo(2 * (1 - 1.8 * 0.25) - 0.8);
    expect(stats[1]).toEqual({ repo: 'o/r', strategy: 'b', candidates: 0, kept: 0, scored: 0, rewardSum: 0 });
  });
});

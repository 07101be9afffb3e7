import { describe, expect, it } from 'vitest';
import { isEnvgenError } from '@envgen/core';
import { DEFAULT_INJECTOR_ALPHA, injectorReward, repairReward } from './injector-reward.js';

const passed = (solveRate: number | null) => ({ checksPassed: true, solveRate });

describe('injectorReward', () => {
  it('is -1 when a consistency check fails, whatever the solve rate', () => {
    expect(injectorReward({ checksPassed: false, solveRate: null })).toBe(-1);
    expect(injectorReward({ checksPassed: false, solveRate: 0.5 })).toBe(-1);
    expect(injectorReward({ checksPassed: false, solveRate: null }, { alpha: 0 })).toBe(-1);
  });

  it('is -alpha at s = 0 and s = 1', () => {
    expect(DEFAULT_INJECTOR_ALPHA).toBe(0.8);
    expect(injectorReward(passed(0))).toBe(-0.8);
    expect(injectorReward(passed(1))).toBe(-0.8);
    expect(injectorReward(passed(0), { alpha: 0.5 })).toBe(-0.5);
    expect(injectorReward(passed(1), { alpha: 0 })).toBe(-0);
  });

  it('is 1 - (1 + alpha)·s strictly between 0 and 1', () => {
    // 1 - 1.8·0.5 = 0.1
    expect(injectorReward(passed(0.5))).toBeCloseTo(0.1, 12);
    // 1 - 1.8·0.25 = 0.55
    expect(injectorReward(passed(0.25))).toBeCloseTo(0.55, 12);
    // alpha 0: 1 - s
    expect(injectorReward(passed(0.25), { alpha: 0 })).toBe(0.75);
    // alpha 1: 1 - 2·0.25 = 0.5; 1 - 2·0.75 = -0.5
    expect(injectorReward(passed(0.25), { alpha: 1 })).toBe(0.5);
    expect(injectorReward(passed(0.75), { alpha: 1 })).toBe(-0.5);
  });

  it('rewards a rarely solved bug more than an often solved one', () => {
    expect(injectorReward(passed(0.1))).toBeGreaterThan(injectorReward(passed(0.9)));
    expect(injectorReward(passed(0.01))).toBeGreaterThan(injectorReward(passed(0)));
  });

  it('rejects a bad alpha or solve rate with an internal error', () => {
    for (const alpha of [-0.1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => injectorReward(passed(0.5), { alpha })).toThrow(/alpha must be a finite number ≥ 0/);
    }
    for (const s of [null, -0.01, 1.01, Number.NaN]) {
      let caught: unknown;
      try {
        injectorReward(passed(s));
      } catch (error) {
        caught = error;
      }
      expect(isEnvgenError(caught, 'internal')).toBe(true);
      expect((caught as Error).message).toMatch(/solve rate in \[0, 1\]/);
    }
  });
});

describe('repairReward', () => {
  it('is +1 when all tests pass and -1 otherwise', () => {
    expect(repairReward({ allTestsPass: true })).toBe(1);
    expect(repairReward({ allTestsPass: false })).toBe(-1);
  });
});

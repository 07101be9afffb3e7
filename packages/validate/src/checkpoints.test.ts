import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { chooseCheckpoints, firstObserver, orderDigest, pickCheckpoint, positionsOf } from './checkpoints.js';

const ORDER = Array.from({ length: 10 }, (_, index) => `t.py::test_${index}`);
const COVERAGE: Record<string, string[]> = {
  'm.py:early': ['t.py::test_7', 't.py::test_1'],
  'm.py:middle': ['t.py::test_5', 't.py::test_6'],
  'm.py:late': ['t.py::test_9'],
  'm.py:gone': ['t.py::test_renamed'],
};

describe('firstObserver', () => {
  const positions = positionsOf(ORDER);

  it('is the earliest test, in run order, that ran any of the entities', () => {
    expect(firstObserver(['m.py:early'], COVERAGE, new Set(), positions)).toBe(1);
    expect(firstObserver(['m.py:late', 'm.py:middle'], COVERAGE, new Set(), positions)).toBe(5);
  });

  it('counts tests that start processes as observers of every change', () => {
    expect(firstObserver(['m.py:late'], COVERAGE, new Set(['t.py::test_3']), positions)).toBe(3);
  });

  it('is null when no observer is in the run order', () => {
    expect(firstObserver(['m.py:gone'], COVERAGE, new Set(), positions)).toBeNull();
    expect(firstObserver(['m.py:unknown'], COVERAGE, new Set(), positions)).toBeNull();
  });
});

describe('chooseCheckpoints', () => {
  it('puts checkpoints at first observers, in run order, without repeats', () => {
    expect(chooseCheckpoints({ order: ORDER, coverage: COVERAGE, alwaysRun: new Set(), count: 16 })).toEqual(['t.py::test_1', 't.py::test_5', 't.py::test_9']);
  });

  it('spreads at most `count` of them over the first observers', () => {
    const coverage = Object.fromEntries(ORDER.map((nodeId, index) => [`m.py:f${index}`, [nodeId]]));
    expect(chooseCheckpoints({ order: ORDER, coverage, alwaysRun: new Set(), count: 3 })).toEqual(['t.py::test_0', 't.py::test_3', 't.py::test_6']);
  });

  it('needs none before a test that starts processes', () => {
    expect(chooseCheckpoints({ order: ORDER, coverage: COVERAGE, alwaysRun: new Set(['t.py::test_2']), count: 16 })).toEqual(['t.py::test_1', 't.py::test_2']);
  });
});

describe('pickCheckpoint', () => {
  it('takes the latest usable checkpoint at or before the first observer', () => {
    expect(pickCheckpoint([1, 5, 9], 7)).toBe(1);
    expect(pickCheckpoint([1, 5, 9], 5)).toBe(1);
    expect(pickCheckpoint([1, null, 9], 7)).toBe(0);
  });

  it('is -1 when every checkpoint comes later or none is usable', () => {
    expect(pickCheckpoint([1, 5], 0)).toBe(-1);
    expect(pickCheckpoint([null, null], 9)).toBe(-1);
    expect(pickCheckpoint([], 9)).toBe(-1);
  });
});

describe('orderDigest', () => {
  it('hashes the node ids joined by newlines, as the warm collector does', () => {
    expect(orderDigest(['a', 'b'])).toBe(createHash('sha256').update('a\nb').digest('hex'));
  });
});

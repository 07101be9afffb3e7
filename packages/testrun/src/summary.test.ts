import { describe, expect, it } from 'vitest';
import { findFlaky } from './baseline.js';
import { countCoverage, coveredEntities, summarizeResults } from './summary.js';
import type { Baseline, TestResult } from './types.js';

const result = (outcome: TestResult['outcome']): TestResult => ({ outcome, duration: 0.01 });

const baseline: Baseline = {
  commit: 'c0ffee',
  profileHash: 'h',
  results: { 'a::p': result('passed'), 'a::f': result('failed'), 'a::flaky': result('passed'), 'a::s': result('skipped') },
  flaky: ['a::flaky'],
  collectionErrors: [],
  coverage: {
    'pkg/m.py:C.run': ['a::p'],
    'pkg/m.py:only_failing': ['a::f'],
    'pkg/m.py:only_flaky': ['a::flaky'],
    'pkg/sub/n.py:helper': ['a::f', 'a::p'],
  },
  functions: ['pkg/m.py:C.run', 'pkg/m.py:only_failing', 'pkg/m.py:only_flaky', 'pkg/m.py:unused', 'pkg/sub/n.py:helper'],
  executedLines: null,
  suiteSeconds: [1, 2],
  createdAt: '2024-01-01T00:00:00.000Z',
};

describe('summaries', () => {
  it('counts outcomes, flaky tests apart', () => {
    expect(summarizeResults(baseline.results, baseline.flaky)).toEqual({ total: 4, passed: 1, failed: 1, error: 0, skipped: 1, flaky: 1 });
  });

  it('lists entities covered by passing, non-flaky tests', () => {
    expect(coveredEntities(baseline)).toEqual([
      { file: 'pkg/m.py', qualifiedName: 'C.run' },
      { file: 'pkg/sub/n.py', qualifiedName: 'helper' },
    ]);
    expect(countCoverage(baseline)).toEqual({ covered: 2, total: 5 });
  });

  it('finds tests whose outcome differs or that only one run has', () => {
    const first = { 'a::same': result('passed'), 'a::pe': result('passed'), 'a::gone': result('failed') };
    const second = { 'a::same': result('passed'), 'a::pe': result('error'), 'a::new': result('passed') };
    expect(findFlaky(first, second)).toEqual(['a::gone', 'a::new', 'a::pe']);
  });
});

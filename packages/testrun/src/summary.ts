import type { Baseline, CoveredEntity, TestResult } from './types.js';

/** Counts of a run's outcomes; `flaky` tests are counted there and not by outcome. */
export interface ResultSummary {
  total: number;
  passed: number;
  failed: number;
  error: number;
  skipped: number;
  flaky: number;
}

/** Counts outcomes of `results`; node ids in `flaky` count as flaky only. */
export function summarizeResults(results: Record<string, TestResult>, flaky: readonly string[] = []): ResultSummary {
  const flakySet = new Set(flaky);
  const summary: ResultSummary = { total: 0, passed: 0, failed: 0, error: 0, skipped: 0, flaky: 0 };
  for (const [nodeId, result] of Object.entries(results)) {
    summary.total += 1;
    if (flakySet.has(nodeId)) summary.flaky += 1;
    else summary[result.outcome] += 1;
  }
  return summary;
}

function splitEntityKey(key: string): CoveredEntity {
  // File paths end in `.py`, so the first `.py:` separates path from qualified name.
  const at = key.indexOf('.py:');
  return at === -1
    ? { file: key.slice(0, key.lastIndexOf(':')), qualifiedName: key.slice(key.lastIndexOf(':') + 1) }
    : { file: key.slice(0, at + 3), qualifiedName: key.slice(at + 4) };
}

/**
 * Entities executed by at least one test that passed in the baseline and is not flaky
 * (the tests that can prove a bug), sorted by file then name.
 */
export function coveredEntities(baseline: Baseline): CoveredEntity[] {
  const flaky = new Set(baseline.flaky);
  return Object.entries(baseline.coverage)
    .filter(([, nodeIds]) => nodeIds.some((nodeId) => baseline.results[nodeId]?.outcome === 'passed' && !flaky.has(nodeId)))
    .map(([key]) => splitEntityKey(key));
}

/** Covered functions and methods (as in {@link coveredEntities}) against all of them. */
export function countCoverage(baseline: Baseline): { covered: number; total: number } {
  return { covered: coveredEntities(baseline).length, total: baseline.functions.length };
}

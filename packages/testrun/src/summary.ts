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

/** Tests that fail or error for one reason: how many, and the first of them. */
export interface FailureGroup {
  reason: string;
  count: number;
  example: string;
}

/**
 * The failing and erroring tests of `results` (flaky ones left out) grouped by the exception
 * they end with, largest group first; tests whose run recorded none are grouped as
 * `unknown`.
 */
export function groupFailures(results: Record<string, TestResult>, flaky: readonly string[] = []): FailureGroup[] {
  const flakySet = new Set(flaky);
  const groups = new Map<string, FailureGroup>();
  for (const [nodeId, result] of Object.entries(results)) {
    if ((result.outcome !== 'failed' && result.outcome !== 'error') || flakySet.has(nodeId)) continue;
    const reason = result.reason ?? 'unknown';
    const group = groups.get(reason);
    if (group === undefined) groups.set(reason, { reason, count: 1, example: nodeId });
    else group.count += 1;
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
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

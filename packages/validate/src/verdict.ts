import type { Verdict } from '@envgen/core';
import type { Profile } from '@envgen/repo';
import type { Baseline, TestResult, TestRun } from '@envgen/testrun';

const MIN_TIMEOUT_MS = 60_000;
const SUITE_TIMEOUT_FACTOR = 10;
const OUTPUT_DETAIL_CHARS = 1000;

/**
 * The default wall-clock limit of one candidate's suite: ten times the slowest clean suite
 * of the baseline, at least 60 s, at most the profile's limit. A bug that makes a test hang
 * costs this much on both paths, so it is derived from the repo rather than the profile's
 * generous default.
 */
export function candidateTimeoutMs(profile: Profile, baseline: Baseline): number {
  const slowest = Math.max(0, ...baseline.suiteSeconds) * 1000;
  return Math.min(profile.timeoutMs, Math.max(MIN_TIMEOUT_MS, Math.round(slowest * SUITE_TIMEOUT_FACTOR)));
}

/** Node ids that passed on the clean repo and are not flaky: the only F2P/P2P candidates, in run order. */
export function stablePassing(baseline: Baseline): string[] {
  const flaky = new Set(baseline.flaky);
  return Object.entries(baseline.results)
    .filter(([nodeId, result]) => result.outcome === 'passed' && !flaky.has(nodeId))
    .map(([nodeId]) => nodeId);
}

/**
 * FAIL_TO_PASS and PASS_TO_PASS of a run with the bug (DESIGN.md): over the stable passing
 * tests of the baseline, those whose outcome with the bug is `failed`, `error` or absent
 * (their module no longer collects) fail; those that `passed` pass; skipped ones are neither.
 * `observed` limits which tests the run saw: the others are known to behave as on the clean
 * repo, so they pass.
 */
export function splitOutcomes(
  stable: readonly string[],
  results: Readonly<Record<string, TestResult>>,
  observed?: ReadonlySet<string>,
): { failToPass: string[]; passToPass: string[] } {
  const failToPass: string[] = [];
  const passToPass: string[] = [];
  for (const nodeId of stable) {
    if (observed !== undefined && !observed.has(nodeId)) {
      passToPass.push(nodeId);
      continue;
    }
    const outcome = results[nodeId]?.outcome;
    if (outcome === 'passed') passToPass.push(nodeId);
    else if (outcome !== 'skipped') failToPass.push(nodeId);
  }
  return { failToPass: failToPass.sort(), passToPass: passToPass.sort() };
}

/** The verdict of F2P/P2P sets: an instance needs at least one of each. */
export function verdictOfSets(sets: { failToPass: string[]; passToPass: string[] }): Verdict {
  if (sets.failToPass.length === 0) {
    return { kind: 'rejected', reason: 'no-failing-test', detail: 'no test that passes on the clean repo fails with the bug' };
  }
  if (sets.passToPass.length === 0) {
    return { kind: 'rejected', reason: 'no-passing-test', detail: `all ${sets.failToPass.length} passing tests fail with the bug` };
  }
  return { kind: 'instance', failToPass: sets.failToPass, passToPass: sets.passToPass };
}

/** The verdict of a run that did not complete, or null when it completed. */
export function verdictOfStatus(status: TestRun['status'], seconds: number, output: string): Verdict | null {
  switch (status) {
    case 'completed':
      return null;
    case 'timeout':
      return { kind: 'rejected', reason: 'timeout', detail: `the suite ran past its limit (${seconds.toFixed(1)} s)` };
    case 'crashed':
    case 'interrupted':
      return { kind: 'rejected', reason: 'crashed', detail: `pytest ${status}: ${output.slice(-OUTPUT_DETAIL_CHARS)}` };
  }
}

/** The verdict of a full-suite run with the bug, compared with the baseline. */
export function verdictOfRun(baseline: Baseline, run: Pick<TestRun, 'status' | 'results' | 'seconds' | 'output'>): Verdict {
  return verdictOfStatus(run.status, run.seconds, run.output) ?? verdictOfSets(splitOutcomes(stablePassing(baseline), run.results));
}

/**
 * True when two verdicts agree: the same kind and reason, and for instances the same
 * FAIL_TO_PASS and PASS_TO_PASS sets. The free-text `detail` is not compared.
 */
export function sameVerdict(a: Verdict, b: Verdict): boolean {
  if (a.kind === 'rejected' || b.kind === 'rejected') {
    return a.kind === 'rejected' && b.kind === 'rejected' && a.reason === b.reason;
  }
  const sameSet = (x: readonly string[], y: readonly string[]): boolean => {
    const sortedY = [...y].sort();
    return x.length === y.length && [...x].sort().every((id, i) => id === sortedY[i]);
  };
  return sameSet(a.failToPass, b.failToPass) && sameSet(a.passToPass, b.passToPass);
}

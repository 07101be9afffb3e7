import { volatileIds } from '@envgen/core';
import type { Verdict } from '@envgen/core';
import type { Profile } from '@envgen/repo';
import type { Baseline, PytestRun, TestResult, TestRun } from '@envgen/testrun';

const MIN_SUITE_TIMEOUT_MS = 60_000;
const SUITE_TIMEOUT_FACTOR = 10;
const MIN_TEST_TIMEOUT_MS = 30_000;
const TEST_TIMEOUT_FACTOR = 20;
/** The floor of a stable test's own limit: far above the stalls a loaded machine gives a quick test. */
const MIN_OWN_TEST_LIMIT_MS = 5_000;
const OUTPUT_DETAIL_CHARS = 1000;

/** The time limits of one candidate's run; both validation paths use the same. */
export interface CandidateLimits {
  /** Wall-clock limit of the whole run; past it the candidate is rejected `timeout`. */
  timeoutMs: number;
  /** Per-test limit of the tests without a limit of their own. */
  testTimeoutMs: number;
  /**
   * Node id → seconds: each stable test's own limit, from its clean duration. A stable test
   * stopped at its limit makes the candidate `timeout` and ends the run at once.
   */
  perTestSeconds: Record<string, number>;
}

/**
 * The default limits, derived from the baseline rather than the profile's generous
 * defaults (a bug that makes a test hang costs this much on both paths), as mutation
 * testers do (mutmut: a multiple of the clean time plus a constant): each stable test gets
 * twenty times its own clean duration, at least 5 s, and a run stops at the first stable
 * test past its limit (the verdict is `timeout` whatever follows), so a hanging mutant costs
 * seconds; other tests get twenty times the slowest clean test, at least 30 s; the run ten
 * times the slowest clean suite, at least 60 s; none more than the profile allows. The
 * floors are there because the limits are wall-clock: on a loaded machine a clean test can
 * stall, and a limit that noise reaches loses a candidate (never makes a wrong instance). A
 * per-test limit is measured per test, so a resumed run reaches it exactly when the full
 * suite does.
 */
export function candidateLimits(profile: Profile, baseline: Baseline): CandidateLimits {
  const slowestSuite = Math.max(0, ...baseline.suiteSeconds) * 1000;
  const slowestTest = Math.max(0, ...Object.values(baseline.results).map((result) => result.duration)) * 1000;
  const testTimeoutMs = Math.min(profile.testTimeoutMs, Math.max(MIN_TEST_TIMEOUT_MS, Math.round(slowestTest * TEST_TIMEOUT_FACTOR)));
  const perTestSeconds: Record<string, number> = {};
  for (const nodeId of stablePassing(baseline)) {
    const clean = (baseline.results[nodeId]?.duration ?? 0) * 1000;
    perTestSeconds[nodeId] = Math.min(testTimeoutMs, Math.max(MIN_OWN_TEST_LIMIT_MS, Math.round(clean * TEST_TIMEOUT_FACTOR))) / 1000;
  }
  return {
    timeoutMs: Math.min(profile.timeoutMs, Math.max(MIN_SUITE_TIMEOUT_MS, Math.round(slowestSuite * SUITE_TIMEOUT_FACTOR))),
    testTimeoutMs,
    perTestSeconds,
  };
}

/**
 * The profile both paths run candidates with: the per-test limit derived from the baseline.
 * (Detected profiles pin PYTHONHASHSEED, so a bug's FAIL_TO_PASS reproduces run to run.)
 */
export function candidateProfile(profile: Profile, limits: CandidateLimits): Profile {
  return { ...profile, testTimeoutMs: limits.testTimeoutMs };
}

/** Node ids that passed on the clean repo and are not flaky: the only F2P/P2P candidates, in run order. */
export function stablePassing(baseline: Baseline): string[] {
  const flaky = new Set(baseline.flaky);
  return Object.entries(baseline.results)
    .filter(([nodeId, result]) => result.outcome === 'passed' && !flaky.has(nodeId))
    .map(([nodeId]) => nodeId);
}

/**
 * The baseline with `ids` counted as flaky too: tests another clean run named otherwise
 * ({@link volatileIds}), which no later run can be matched on.
 */
export function withFlaky(baseline: Baseline, ids: Iterable<string>): Baseline {
  const flaky = new Set(baseline.flaky);
  const before = flaky.size;
  for (const id of ids) flaky.add(id);
  return flaky.size === before ? baseline : { ...baseline, flaky: [...flaky].sort() };
}

/**
 * Of the baseline's stable passing tests, those another clean run, cold as the baseline's,
 * names and did not see pass (a test that times itself, under load): their outcome differs
 * between clean runs of the same tree, which is what the baseline's two runs call flaky.
 */
export function flippedIds(baseline: Baseline, statuses: Readonly<Record<string, string>>): string[] {
  return stablePassing(baseline).filter((nodeId) => statuses[nodeId] !== undefined && statuses[nodeId] !== 'passed');
}

/** The stable passing tests a run is judged on: those it names as the baseline does ({@link volatileIds}). */
export function stableIn(baseline: Baseline, results: Readonly<Record<string, TestResult>>): string[] {
  const stable = stablePassing(baseline);
  // Only a test the run does not name can have been renamed: most runs name them all.
  if (stable.every((nodeId) => results[nodeId] !== undefined)) return stable;
  const renamed = volatileIds(Object.keys(baseline.results), Object.keys(results));
  return renamed.size === 0 ? stable : stable.filter((nodeId) => !renamed.has(nodeId));
}

/**
 * FAIL_TO_PASS and PASS_TO_PASS of a run with the bug (DESIGN.md): over the stable passing
 * tests of the baseline, those whose outcome with the bug is `failed`, `error` or absent
 * (their module no longer collects) fail; those that `passed` pass; skipped ones are neither.
 */
export function splitOutcomes(stable: readonly string[], results: Readonly<Record<string, TestResult>>): { failToPass: string[]; passToPass: string[] } {
  const failToPass: string[] = [];
  const passToPass: string[] = [];
  for (const nodeId of stable) {
    const outcome = results[nodeId]?.outcome;
    if (outcome === 'passed') passToPass.push(nodeId);
    else if (outcome !== 'skipped') failToPass.push(nodeId);
  }
  return { failToPass: failToPass.sort(), passToPass: passToPass.sort() };
}

/**
 * The verdict of a run's results (see {@link splitOutcomes}): `timeout` when a stable test
 * was stopped at the per-test limit, else an instance with at least one FAIL_TO_PASS and
 * one PASS_TO_PASS test.
 */
export function judgeResults(stable: readonly string[], results: Readonly<Record<string, TestResult>>): Verdict {
  const stopped = stable.filter((nodeId) => results[nodeId]?.timedOut === true);
  if (stopped.length > 0) {
    return { kind: 'rejected', reason: 'timeout', detail: `${stopped.length} test(s) ran past the per-test limit, e.g. ${stopped[0] ?? ''}` };
  }
  const sets = splitOutcomes(stable, results);
  if (sets.failToPass.length === 0) {
    return { kind: 'rejected', reason: 'no-failing-test', detail: 'no test that passes on the clean repo fails with the bug' };
  }
  if (sets.passToPass.length === 0) {
    return { kind: 'rejected', reason: 'no-passing-test', detail: `all ${sets.failToPass.length} passing tests fail with the bug` };
  }
  return { kind: 'instance', failToPass: sets.failToPass, passToPass: sets.passToPass };
}

/**
 * The verdict of a run that did not complete, or null when its results decide. A run the
 * project's own code stopped (a conftest the bug breaks at import) is judged by its results:
 * every test it did not run fails.
 */
export function verdictOfStatus(run: Pick<TestRun, 'status' | 'limitHit' | 'watchdog' | 'seconds' | 'output'> & Pick<PytestRun, 'stoppedIn'>): Verdict | null {
  const { status, seconds, output } = run;
  if (run.limitHit !== undefined) {
    const limit = run.limitHit === 'memory' ? 'memory limit' : 'limit on processes and threads alive at once';
    return { kind: 'rejected', reason: 'resource-limit', detail: `the run hit the sandbox's ${limit} after ${seconds.toFixed(1)} s` };
  }
  switch (status) {
    case 'completed':
    case 'stopped':
      return null;
    case 'timeout':
      if (run.watchdog === true) {
        const test = run.stoppedIn === undefined ? 'a test' : run.stoppedIn.nodeId;
        return { kind: 'rejected', reason: 'timeout', detail: `${test} ran past the per-test limit in code that never returned to the interpreter; the run was ended after ${seconds.toFixed(1)} s` };
      }
      return { kind: 'rejected', reason: 'timeout', detail: `the run passed its limit (${seconds.toFixed(1)} s)` };
    case 'crashed':
    case 'interrupted':
      return { kind: 'rejected', reason: 'crashed', detail: `pytest ${status}: ${output.slice(-OUTPUT_DETAIL_CHARS)}` };
  }
}

/**
 * A `crashed` verdict whose output is pytest's internal error raised through a file the
 * candidate changes (`changed`, repo-relative) is the bug's own: the project's code runs inside
 * pytest (a plugin it is, a hook it implements: pytest-dev/pytest-rerunfailures' bugs in its
 * `pytest_runtest_protocol`), and plain pytest with the bug stops the same, before or without
 * results. Other verdicts are returned as they are.
 */
export function internalErrorOfBug(verdict: Verdict, changed: readonly string[]): Verdict {
  if (verdict.kind !== 'rejected' || verdict.reason !== 'crashed' || !verdict.detail.includes('INTERNALERROR>')) return verdict;
  const through = changed.find((path) => verdict.detail.includes(`/${path}", line `));
  return through === undefined ? verdict : { kind: 'rejected', reason: 'internal-error', detail: `pytest stopped with an internal error raised through ${through}, which the bug changes: ${verdict.detail}` };
}

/**
 * The verdict of a full-suite run with the bug, compared with the baseline. A stable test
 * stopped at its limit makes it `timeout` first: such a run ends there on purpose. Tests the
 * run names otherwise than the baseline (parameter ids made from the time) are in neither set.
 * An instance names the tests counted flaky that failed in the run (`flakyFailing`).
 */
export function verdictOfRun(baseline: Baseline, run: Pick<TestRun, 'status' | 'limitHit' | 'watchdog' | 'results' | 'seconds' | 'output'> & Pick<PytestRun, 'stoppedIn'>): Verdict {
  const stable = stableIn(baseline, run.results);
  if (stable.some((nodeId) => run.results[nodeId]?.timedOut === true)) return judgeResults(stable, run.results);
  // A test counted flaky (its outcome is in no set) that ran past its own limit still ended the
  // run there: the tests after it did not run. A timeout, not a crash of pytest.
  const stopped = run.status === 'interrupted' && run.limitHit === undefined ? Object.keys(run.results).find((nodeId) => run.results[nodeId]?.timedOut === true) : undefined;
  if (stopped !== undefined) {
    return { kind: 'rejected', reason: 'timeout', detail: `${stopped} (counted flaky) ran past the per-test limit and the run ended there, before the tests after it` };
  }
  const verdict = verdictOfStatus(run) ?? judgeResults(stable, run.results);
  if (verdict.kind !== 'instance') return verdict;
  const flakyFailing = baseline.flaky.filter((nodeId) => ['failed', 'error'].includes(run.results[nodeId]?.outcome ?? 'missing'));
  return flakyFailing.length === 0 ? verdict : { ...verdict, flakyFailing };
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

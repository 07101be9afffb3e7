import { describe, expect, it } from 'vitest';
import type { Baseline } from '@envgen/testrun';
import { candidateLimits, internalErrorOfBug, judgeResults, splitOutcomes, stablePassing, verdictOfRun } from './verdict.js';
import type { Profile } from '@envgen/repo';

const baseline: Baseline = {
  commit: 'c',
  profileHash: 'h',
  results: {
    't::a': { outcome: 'passed', duration: 0.1 },
    't::b': { outcome: 'passed', duration: 0.1 },
    't::flaky': { outcome: 'passed', duration: 0.1 },
    't::broken': { outcome: 'failed', duration: 0.1 },
    't::c': { outcome: 'passed', duration: 0.1 },
  },
  flaky: ['t::flaky'],
  collectionErrors: [],
  coverage: {},
  functions: [],
  executedLines: null,
  suiteSeconds: [1],
  createdAt: '2024-01-01T00:00:00Z',
};

describe('internalErrorOfBug', () => {
  const output = [
    'INTERNALERROR>   File "/tmp/repo/src/pytest_rerunfailures.py", line 214, in get_reruns_count',
    'INTERNALERROR>     if rerun_marker is not None:',
    "INTERNALERROR> NameError: name 'rerun_marker' is not defined",
  ].join('\n');
  const crashed = { kind: 'rejected', reason: 'crashed', detail: `pytest crashed: ${output}` } as const;

  it("names pytest's internal error raised through a changed file the bug's (pytest-dev/pytest-rerunfailures: a plugin's hook)", () => {
    const verdict = internalErrorOfBug(crashed, ['src/pytest_rerunfailures.py']);
    expect(verdict).toMatchObject({ kind: 'rejected', reason: 'internal-error' });
    expect(verdict.kind === 'rejected' && verdict.detail).toMatch(/^pytest stopped with an internal error raised through src\/pytest_rerunfailures\.py, which the bug changes: pytest crashed: INTERNALERROR>/);
  });

  it('leaves a crash whose traceback passes through no changed file, and every other verdict', () => {
    expect(internalErrorOfBug(crashed, ['src/other.py'])).toBe(crashed);
    const timeout = { kind: 'rejected', reason: 'timeout', detail: output } as const;
    expect(internalErrorOfBug(timeout, ['src/pytest_rerunfailures.py'])).toBe(timeout);
    const noInternal = { kind: 'rejected', reason: 'crashed', detail: 'pytest crashed: Segmentation fault in /tmp/repo/src/pytest_rerunfailures.py", line 3' } as const;
    expect(internalErrorOfBug(noInternal, ['src/pytest_rerunfailures.py'])).toBe(noInternal);
  });
});

describe('verdicts', () => {
  it('leaves out tests the run names otherwise (parameter ids made at import), counting a vanished case as failed', () => {
    const stamped: Baseline = {
      ...baseline,
      results: { 't::a': { outcome: 'passed', duration: 0.1 }, 't::p[fixed]': { outcome: 'passed', duration: 0.1 }, 't::p[10:00:01]': { outcome: 'passed', duration: 0.1 } },
      flaky: [],
    };
    const passed = { outcome: 'passed' as const, duration: 0 };
    const renamed = { status: 'completed' as const, seconds: 1, output: '', results: { 't::a': { outcome: 'failed' as const, duration: 0 }, 't::p[fixed]': passed, 't::p[10:00:07]': passed } };
    expect(verdictOfRun(stamped, renamed)).toEqual({ kind: 'instance', failToPass: ['t::a'], passToPass: ['t::p[fixed]'] });
    // A module that no longer collects loses its cases: gone, so failed.
    const gone = { ...renamed, results: { 't::a': passed } };
    expect(verdictOfRun(stamped, gone)).toEqual({ kind: 'instance', failToPass: ['t::p[10:00:01]', 't::p[fixed]'], passToPass: ['t::a'] });
  });

  it('names the tests counted flaky that failed in the run, in neither set, so the weakening can delete them too', () => {
    const failed = { outcome: 'failed' as const, duration: 0 };
    const passed = { outcome: 'passed' as const, duration: 0 };
    const run = { status: 'completed' as const, seconds: 1, output: '', results: { 't::a': failed, 't::b': passed, 't::flaky': failed, 't::c': passed } };
    expect(verdictOfRun(baseline, run)).toEqual({ kind: 'instance', failToPass: ['t::a'], passToPass: ['t::b', 't::c'], flakyFailing: ['t::flaky'] });
    // A flaky test that passed, or that the run did not reach (it resumed after it), is not named.
    expect(verdictOfRun(baseline, { ...run, results: { ...run.results, 't::flaky': passed } })).toEqual({ kind: 'instance', failToPass: ['t::a'], passToPass: ['t::b', 't::c'] });
    const { 't::flaky': _, ...resumed } = run.results;
    expect(verdictOfRun(baseline, { ...run, results: resumed })).not.toHaveProperty('flakyFailing');
  });

  it('counts failed, errored and vanished stable tests as FAIL_TO_PASS, skipped ones as neither', () => {
    expect(stablePassing(baseline)).toEqual(['t::a', 't::b', 't::c']);
    const run = { status: 'completed' as const, seconds: 1, output: '', results: { 't::a': { outcome: 'error' as const, duration: 0 }, 't::b': { outcome: 'skipped' as const, duration: 0 }, 't::flaky': { outcome: 'failed' as const, duration: 0 } } };
    expect(splitOutcomes(stablePassing(baseline), run.results)).toEqual({ failToPass: ['t::a', 't::c'], passToPass: [] });
    expect(verdictOfRun(baseline, run)).toMatchObject({ kind: 'rejected', reason: 'no-passing-test' });
  });

  it('rejects a stable test stopped at the per-test limit as a timeout', () => {
    const results = { 't::a': { outcome: 'failed' as const, duration: 10, timedOut: true as const }, 't::b': { outcome: 'failed' as const, duration: 0 } };
    expect(judgeResults(stablePassing(baseline), results)).toMatchObject({ kind: 'rejected', reason: 'timeout' });
  });

  it('derives limits from the baseline within the profile', () => {
    const profile = { timeoutMs: 600_000, testTimeoutMs: 120_000 } as Profile;
    const slow = { ...baseline, suiteSeconds: [2, 15], results: { ...baseline.results, 't::c': { outcome: 'passed' as const, duration: 0.5 } } };
    expect(candidateLimits(profile, slow)).toEqual({ timeoutMs: 150_000, testTimeoutMs: 30_000, perTestSeconds: { 't::a': 5, 't::b': 5, 't::c': 10 } });
    expect(candidateLimits({ ...profile, timeoutMs: 5_000, testTimeoutMs: 1_000 }, baseline)).toEqual({ timeoutMs: 5_000, testTimeoutMs: 1_000, perTestSeconds: { 't::a': 1, 't::b': 1, 't::c': 1 } });
  });

  it('calls a run that a stable test ended at its own limit a timeout, whatever its status', () => {
    const results = { 't::a': { outcome: 'passed' as const, duration: 0 }, 't::b': { outcome: 'failed' as const, duration: 5, timedOut: true as const } };
    expect(verdictOfRun(baseline, { status: 'interrupted', seconds: 6, output: '', results })).toMatchObject({ kind: 'rejected', reason: 'timeout' });
  });

  it('calls a run a flaky test ended at its own limit a timeout, not a crash: the tests after it did not run', () => {
    // python-cmd2/cmd2's test_proc_reader_send_sigint, learnt flaky in the run, then past its limit: the plugin ends the session.
    const results = { 't::a': { outcome: 'passed' as const, duration: 0 }, 't::flaky': { outcome: 'failed' as const, duration: 5, timedOut: true as const } };
    expect(verdictOfRun(baseline, { status: 'interrupted', seconds: 6, output: '! Interrupted: envgen: t::flaky ran past its limit !', results })).toMatchObject({ kind: 'rejected', reason: 'timeout', detail: expect.stringContaining('t::flaky (counted flaky)') });
  });

  it('judges a run stopped by a conftest the bug breaks at import by its results: every stable test fails', () => {
    expect(verdictOfRun(baseline, { status: 'stopped', seconds: 0.2, output: "ImportError while loading conftest 'tests/conftest.py'.", results: {} })).toMatchObject({ kind: 'rejected', reason: 'no-passing-test' });
  });

  it("rejects a run a sandbox limit stopped as such, not as a crash: the bug allocates or forks without end", () => {
    expect(verdictOfRun(baseline, { status: 'interrupted', limitHit: 'memory', seconds: 0.4, output: '', results: {} })).toEqual({
      kind: 'rejected',
      reason: 'resource-limit',
      detail: "the run hit the sandbox's memory limit after 0.4 s",
    });
    expect(verdictOfRun(baseline, { status: 'interrupted', limitHit: 'processes', seconds: 2, output: '', results: {} })).toMatchObject({ reason: 'resource-limit', detail: expect.stringContaining('limit on processes') });
    expect(verdictOfRun(baseline, { status: 'interrupted', seconds: 2, output: 'KeyboardInterrupt', results: {} })).toMatchObject({ reason: 'crashed' });
  });

  it('rejects timeouts and crashes before looking at results', () => {
    expect(verdictOfRun(baseline, { status: 'timeout', seconds: 60, output: '', results: {} })).toMatchObject({ reason: 'timeout' });
    expect(verdictOfRun(baseline, { status: 'crashed', seconds: 1, output: 'Segmentation fault', results: {} })).toMatchObject({ reason: 'crashed' });
    expect(verdictOfRun(baseline, { status: 'completed', seconds: 1, output: '', results: { 't::a': { outcome: 'passed', duration: 0 }, 't::b': { outcome: 'passed', duration: 0 }, 't::c': { outcome: 'passed', duration: 0 } } })).toMatchObject({ reason: 'no-failing-test' });
  });
});

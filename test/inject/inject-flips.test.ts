import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkBundle } from '@envgen/bundle';
import { resolveConfig } from '@envgen/config';
import { silentLogger } from '@envgen/core';
import { checkoutRepo, createProgress, resolveProfile, runInject } from '@envgen/cli';
import { openPool } from '@envgen/pool';
import { LIB, TESTS } from '../support/calc-fixture.js';
import { writeFixtureRepo } from '../support/fixture-repo.js';

const FLIP_TEST = 'tests/test_flip.py::test_flips';

/**
 * A test that fails only in runs of a tree with a bug: under the bundle's script (pytest
 * started from `python3 -c`) or only in the validator's, and there every time or (`once`)
 * only the first, as a test that times itself fails under load. The runs share the host's
 * file system (the `none` sandbox), where the test leaves a mark when it fails.
 */
function flipTest(under: 'script' | 'validator', once: boolean): string {
  const mark = join(mkdtempSync(join(tmpdir(), 'envgen-flip-')), 'failed');
  return `import hashlib
import os
import sys

CALC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "calc.py")
MARK = ${JSON.stringify(mark)}


def test_flips():
    with open(CALC, "rb") as source:
        bug = hashlib.sha256(source.read()).hexdigest() != ${JSON.stringify(createHash('sha256').update(LIB).digest('hex'))}
    if bug and (sys.argv[0] == "-c") == ${under === 'script' ? 'True' : 'False'} and not (${once ? 'True' : 'False'} and os.path.exists(MARK)):
        open(MARK, "w").close()
        raise AssertionError("failed")
`;
}

function inject(under: 'script' | 'validator', once: boolean) {
  const repo = writeFixtureRepo({ 'calc.py': LIB, 'tests/test_calc.py': TESTS, 'tests/test_flip.py': flipTest(under, once) }, { git: true, name: 'calc' });
  const home = mkdtempSync(join(tmpdir(), 'envgen-home-'));
  const settings = resolveConfig({ env: { ENVGEN_HOME: home, ENVGEN_SANDBOX: 'none' }, cwd: home });
  return { home, report: runInject({ repo, count: 4, seed: 3, combine: 0, concurrency: 1 }, settings, silentLogger, createProgress({ quiet: true })) };
}

describe('a test that flips in a run of a bug', () => {
  it.each(['script', 'validator'] as const)('is learnt flaky when it fails once (under the %s), the cold replay and the verdict disagree on it, and it flips when both run again: the candidate is proved again without it', async (under) => {
    const { home, report: running } = inject(under, true);
    const report = await running;
    expect(report.flipped).toEqual([FLIP_TEST]);
    expect(report.replay?.agreed).toBe(true);
    expect(report.afterVerdict).toEqual([]);
    expect(report.kept).toBeGreaterThan(0);
    // The candidate proved again counts once among the verdicts, as every other does.
    const { resumed, collection, scratch, reference } = report.validation;
    expect(resumed + collection + scratch + reference).toBe(report.tried);
    const pool = openPool(home);
    try {
      for (const id of report.instanceIds) {
        const instance = pool.getInstance(id);
        expect([...(instance?.FAIL_TO_PASS ?? []), ...(instance?.PASS_TO_PASS ?? [])]).not.toContain(FLIP_TEST);
      }
    } finally {
      pool.close();
    }
  });

  it('is a disagreement when it fails in every cold run of the bug: the script and the warm path differ', async () => {
    const report = await inject('script', false).report;
    expect(report.flipped).toEqual([]);
    expect(report.replay).toMatchObject({ agreed: false, detail: expect.stringContaining(`tests the bundle's script sees fail that the validator did not: ${FLIP_TEST}`) });
    // Every later bundle is checked cold, where the test fails beside the bug's own.
    expect(report.afterVerdict.length).toBeGreaterThan(0);
    for (const entry of report.afterVerdict) expect(entry.detail).toContain(FLIP_TEST);
  });
});

const FLAKY_TEST = 'tests/test_a_flaky.py::test_calc_after_a_first_failure';

/**
 * A test that any bug of calc.py breaks, and that the first run to reach it fails: the
 * baseline's coverage run (\`coverage\`: the baseline's two clean runs disagree on it, and the
 * coverage it records misses calc.py), or a run in the validator's warm interpreter, where it
 * hangs (\`warm\`: it ends at its limit in the validator's warm clean run, which runs again and
 * passes it: it runs first, before tests that run had not reached), as a test that starts a
 * multiprocessing pool now and then does on a busy machine. The mark it leaves is on the
 * host's file system, which the \`none\` sandbox shares.
 */
function flakyTest(first: 'coverage' | 'warm'): string {
  const mark = join(mkdtempSync(join(tmpdir(), 'envgen-flaky-')), 'failed');
  return `import os
import sys
import time

from calc import Counter, add, clamp, mean


def test_calc_after_a_first_failure():
    if ${first === 'warm' ? '"envgen_warm" in sys.modules' : 'os.environ.get("ENVGEN_COVERAGE") == "1"'}:
        try:
            os.close(os.open(${JSON.stringify(mark)}, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            pass
        else:
            ${first === 'warm' ? 'time.sleep(600)' : 'raise AssertionError("the first run fails")'}
    assert add(2, 3) == 5
    assert [clamp(5, 0, 3), clamp(-1, 0, 3), clamp(2, 0, 3)] == [3, 0, 2]
    assert mean([1, 2, 3]) == 2
    counter = Counter()
    counter.bump()
    assert counter.bump(2) == 3
`;
}

describe('a test counted flaky that a bug breaks', () => {
  it.each(['coverage', 'warm'] as const)('(first failing in the %s run) is in no FAIL_TO_PASS, and the weakening deletes it too: the weakened suite hides the bug cold, and the cold replay agrees with the verdict', async (first) => {
    const repo = writeFixtureRepo({ 'calc.py': LIB, 'tests/test_calc.py': TESTS, 'tests/test_a_flaky.py': flakyTest(first) }, { git: true, name: 'calc' });
    const home = mkdtempSync(join(tmpdir(), 'envgen-home-'));
    const settings = resolveConfig({ env: { ENVGEN_HOME: home, ENVGEN_SANDBOX: 'none' }, cwd: home });
    const report = await runInject({ repo, count: 6, seed: 3, combine: 0, concurrency: 1 }, settings, silentLogger, createProgress({ quiet: true }));
    if (first === 'warm') expect(report.warmFlaky).toEqual([FLAKY_TEST]);
    // Before, the weakening left the test: the first bundle's cold run saw the bug through it
    // (check 6), and every later bundle was checked cold and rejected.
    expect(report.afterVerdict).toEqual([]);
    expect(report.replay?.agreed).toBe(true);
    expect(report.kept).toBeGreaterThan(0);
    const { provider, repo: resolved, worktree } = await checkoutRepo(repo, settings, silentLogger, createProgress({ quiet: true }));
    const pool = openPool(home);
    try {
      const profile = await resolveProfile(worktree.path, resolved, settings, provider);
      for (const id of report.instanceIds) {
        const instance = pool.getInstance(id);
        expect([...(instance?.FAIL_TO_PASS ?? []), ...(instance?.PASS_TO_PASS ?? [])]).not.toContain(FLAKY_TEST);
        const bundle = pool.readBundle(id);
        expect(bundle['test_weaken.diff']).toContain('-def test_calc_after_a_first_failure():');
        const checked = await checkBundle({ bundle, worktree: worktree.path, profile, sandboxProvider: provider });
        expect(checked.checks.filter((check) => !check.passed)).toEqual([]);
      }
    } finally {
      pool.close();
      await worktree.remove();
    }
  });
});

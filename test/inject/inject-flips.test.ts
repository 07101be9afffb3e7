import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '@envgen/config';
import { silentLogger } from '@envgen/core';
import { createProgress, runInject } from '@envgen/cli';
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

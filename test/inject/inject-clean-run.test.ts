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

// Passes under \`python3 -m pytest\` (the baseline) and fails under the bundle's script, which
// starts pytest from \`python3 -c\`: a test that sees how pytest was launched.
const LAUNCH_TEST = `import sys


def test_launched_as_a_module():
    assert sys.argv[0] != "-c"
`;

function inject(repo: string, home: string, count: number, seed: number) {
  const settings = resolveConfig({ env: { ENVGEN_HOME: home }, cwd: home });
  return runInject({ repo, count, seed, combine: 0, concurrency: 1 }, settings, silentLogger, createProgress({ quiet: true }));
}

describe("the bundle script's cold clean run", () => {
  it('runs once per commit: a later inject of the commit takes it from the pool, and its bundles still agree with a cold replay', async () => {
    const repo = writeFixtureRepo({ 'calc.py': LIB, 'tests/test_calc.py': TESTS }, { git: true, name: 'calc' });
    const home = mkdtempSync(join(tmpdir(), 'envgen-home-'));

    const first = await inject(repo, home, 4, 3);
    expect(first.cleanRun?.cached).toBe(false);
    expect(first.cleanRun?.seconds).toBeGreaterThan(0);

    const second = await inject(repo, home, 16, 5);
    expect(second.cleanRun).toEqual({ cached: true, seconds: first.cleanRun?.seconds, flaky: [] });
    expect(second.kept).toBeGreaterThan(0);
    expect(second.replay?.agreed).toBe(true);
    expect(second.afterVerdict).toEqual([]);
  });

  it('is made again by the next inject when it disagrees with the baseline, whose tests it did not see pass are in no verdict', async () => {
    const repo = writeFixtureRepo({ 'calc.py': LIB, 'tests/test_calc.py': TESTS, 'tests/test_launch.py': LAUNCH_TEST }, { git: true, name: 'calc' });
    const home = mkdtempSync(join(tmpdir(), 'envgen-home-'));

    const first = await inject(repo, home, 6, 3);
    // Like a test that times itself and fails under load: it passed in the baseline's two runs, not in this one.
    expect(first.cleanRun).toMatchObject({ cached: false, flaky: ['tests/test_launch.py::test_launched_as_a_module'] });
    expect(first.kept).toBeGreaterThan(0);
    expect(first.afterVerdict).toEqual([]);
    const pool = openPool(home);
    try {
      for (const id of first.instanceIds) {
        const instance = pool.getInstance(id);
        expect([...(instance?.FAIL_TO_PASS ?? []), ...(instance?.PASS_TO_PASS ?? [])]).not.toContain('tests/test_launch.py::test_launched_as_a_module');
        expect(instance?.PASS_TO_PASS.length).toBeGreaterThan(0);
      }
    } finally {
      pool.close();
    }
    const second = await inject(repo, home, 2, 5);
    expect(second.cleanRun?.cached).toBe(false);
  });
});

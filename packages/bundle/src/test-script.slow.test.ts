import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectProfile } from '@envgen/repo';
import type { Profile } from '@envgen/repo';
import { createSandboxProvider } from '@envgen/sandbox';
import { bundleRunLimits, createBundleRunner } from './bundle-runner.js';
import { CALC_REPO, writeTree } from './test-fixtures.js';
import { makeTestParser, makeTestScript } from './test-script.js';
import { SHADOWED_NAMESPACE, SHADOWED_NAMESPACE_ENV } from '../../../test/support/shadowed-namespace.js';

const trees: string[] = [];
afterAll(async () => {
  for (const tree of trees) await rm(tree, { recursive: true, force: true });
});

/** A runner of an empty bundle's test_script.sh and test_parser.py for `profile`, in the local sandbox. */
function cleanRunner(repo: string, profile: Profile) {
  return createBundleRunner({
    bundle: { 'bug_inject.diff': '', 'test_weaken.diff': '', 'test_files.txt': '', 'test_script.sh': makeTestScript(profile), 'test_parser.py': makeTestParser() },
    worktree: repo,
    python: profile.python,
    sandboxProvider: createSandboxProvider('local'),
    limits: { scriptTimeoutMs: 60_000, parserTimeoutMs: 30_000, maxOutputBytes: 1024 ** 2 },
  });
}

describe('test_script.sh and test_parser.py', () => {
  it('report every real pytest outcome by node id, ids with spaces, brackets and " - " included', async () => {
    const repo = await writeTree({
      ...CALC_REPO,
      'tests/test_broken.py': 'def test_never(:\n    pass\n',
      'tests/test_more.py': 'import pytest\n\n\n@pytest.mark.xfail(strict=True)\ndef test_strict_xpass():\n    pass\n\n\ndef test_teardown_error(request):\n    request.addfinalizer(lambda: 1 / 0)\n\n\ndef test_fails():\n    assert 1 == 2\n',
    });
    trees.push(repo);
    const profile = { ...(await detectProfile(repo)), env: { CALC_MODE: "it's fine" } };
    const runner = await cleanRunner(repo, profile);
    try {
      const run = await runner.run('clean', []);
      expect(run).toEqual({
        ok: true,
        label: 'clean',
        seconds: expect.any(Number),
        results: {
          'tests/test_broken.py': 'failed',
          'tests/test_fmt.py::test_scale': 'passed',
          'tests/test_fmt.py::test_show_sum': 'passed',
          'tests/test_more.py::test_fails': 'failed',
          'tests/test_more.py::test_strict_xpass': 'failed',
          'tests/test_more.py::test_teardown_error': 'failed',
          'tests/test_ops.py::TestClamp::test_edges': 'passed',
          'tests/test_ops.py::TestClamp::test_inside': 'passed',
          'tests/test_ops.py::test_add': 'passed',
          'tests/test_ops.py::test_add_cases[one plus two]': 'passed',
          'tests/test_ops.py::test_add_cases[x - y [z]]': 'passed',
          'tests/test_ops.py::test_fixture_error': 'failed',
          'tests/test_ops.py::test_known_bug': 'skipped',
          'tests/test_ops.py::test_mul': 'passed',
          'tests/test_ops.py::test_skipped': 'skipped',
        },
      });
    } finally {
      await runner.close();
    }
  });

  it("import the tree's portion of a namespace package an installed copy's -nspkg.pth made first, in pytest and in the processes tests start (zope.interface)", async () => {
    const repo = await writeTree(SHADOWED_NAMESPACE);
    trees.push(repo);
    const profile = { ...(await detectProfile(repo)), env: SHADOWED_NAMESPACE_ENV, testArgs: ['tests'] };
    const runner = await cleanRunner(repo, profile);
    try {
      // Plain pytest imports the installed copy (41): both tests fail there.
      expect(await runner.run('clean', [])).toMatchObject({ ok: true, results: { 'tests/test_ns.py::test_answer': 'passed', 'tests/test_ns.py::test_answer_in_a_child': 'passed' } });
    } finally {
      await runner.close();
    }
  });

  it('draw the same Hypothesis examples in every run (seed 0), or those of the seed the project sets', async () => {
    const property = 'import os\n\nfrom hypothesis import given, strategies as st\n\n\n@given(st.integers())\ndef test_draw(x):\n    with open(os.environ["DRAWN"], "a") as handle:\n        handle.write("%d\\n" % x)\n';
    const drawn = async (files: Record<string, string>): Promise<string[]> => {
      const repo = await writeTree({ 'tests/test_draw.py': property, ...files });
      trees.push(repo);
      await writeFile(join(repo, 'test_script.sh'), makeTestScript(await detectProfile(repo)));
      const runs: string[] = [];
      for (const run of [1, 2]) {
        const file = join(repo, `drawn-${run}.txt`);
        execFileSync('bash', ['test_script.sh'], { cwd: repo, env: { ...process.env, DRAWN: file } });
        runs.push(await readFile(file, 'utf8'));
      }
      // A seeded run neither reads nor writes Hypothesis's example database (a plugin may
      // still cache Unicode tables beside it: pydantic's, in `.hypothesis/unicode_data`).
      expect(existsSync(join(repo, '.hypothesis', 'examples'))).toBe(false);
      return runs;
    };
    const [first, second] = await drawn({});
    expect(first?.split('\n').length).toBeGreaterThan(50);
    expect(second).toBe(first);
    const [own, ownAgain] = await drawn({ 'pytest.ini': '[pytest]\naddopts = --hypothesis-seed=7\n' });
    expect(ownAgain).toBe(own);
    expect(own).not.toBe(first);
    // Hypothesis is imported where the tests import it, as in plain pytest (before, at start for every suite).
    const looks = await writeTree({ 'tests/test_looks.py': 'import sys\n\n\ndef test_looks():\n    assert "hypothesis" not in sys.modules\n' });
    trees.push(looks);
    await writeFile(join(looks, 'test_script.sh'), makeTestScript(await detectProfile(looks)));
    expect(execFileSync('bash', ['test_script.sh'], { cwd: looks, encoding: 'utf8' })).toContain('"outcome": "passed"');
  });

  it('print well under the output allowance per test, so a suite of any size fits its limits', async () => {
    // 2,000 cases with 200-character ids: each test's line of results and progress mark.
    const repo = await writeTree({
      'tests/test_many.py': 'import pytest\n\n\n@pytest.mark.parametrize("case", ["c%04d-" % n + "x" * 194 for n in range(2000)])\ndef test_case(case):\n    assert case\n',
    });
    trees.push(repo);
    const profile = await detectProfile(repo);
    await writeFile(join(repo, 'test_script.sh'), makeTestScript(profile));
    const bytes = Number(execFileSync('bash', ['-c', 'bash test_script.sh | wc -c'], { cwd: repo, encoding: 'utf8' }).trim());
    const perTest = bytes / 2000;
    expect(perTest).toBeGreaterThan(200);
    // Half the allowance per test at most: the rest is room for a suite's own prints.
    expect(perTest * 2).toBeLessThan(bundleRunLimits(60_000, 100_000).maxOutputBytes / 100_000);
    expect(bundleRunLimits(60_000, 0).maxOutputBytes).toBe(8 * 1024 ** 2);
    expect(bundleRunLimits(60_000, 62_435).maxOutputBytes).toBe(62_435 * 1024);
  });
});

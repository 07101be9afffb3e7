import { rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BundleFiles } from '@envgen/core';
import { makePatch } from '@envgen/patch';
import { detectProfile } from '@envgen/repo';
import type { Profile } from '@envgen/repo';
import { createSandboxProvider } from '@envgen/sandbox';
import { checkBundle } from './check-bundle.js';
import type { BundleCheckReport, CheckBundleOptions, CheckName } from './check-bundle.js';
import { CALC_REPO, treeReader, writeTree } from './test-fixtures.js';
import { makeTestParser, makeTestScript } from './test-script.js';
import { makeTestWeaken } from './test-weaken.js';

const provider = createSandboxProvider('local');
let repo: string;
let profile: Profile;

beforeAll(async () => {
  await provider.ensureAvailable();
  repo = await writeTree(CALC_REPO);
  // A symlink in the clean tree: diffs may not write through it.
  await symlink('/etc/hostname', join(repo, 'calc/link.py'));
  profile = await detectProfile(repo);
});

afterAll(async () => {
  await rm(repo, { recursive: true, force: true });
});

/** `add` subtracts: breaks test_add, test_add_cases[one plus two] and test_show_sum. */
const ADD_BUG = { 'calc/ops.py': (CALC_REPO['calc/ops.py'] ?? '').replace('return a + b', 'return a - b') };
const ADD_F2P = ['tests/test_fmt.py::test_show_sum', 'tests/test_ops.py::test_add', 'tests/test_ops.py::test_add_cases[one plus two]'];

async function makeBundle(edits: Record<string, string>, failToPass: string[], overrides: Partial<BundleFiles> = {}): Promise<BundleFiles> {
  const weaken = await makeTestWeaken({ readFile: treeReader(repo), failToPass, testFiles: profile.testFiles });
  return {
    'bug_inject.diff': makePatch(Object.entries(edits).map(([path, after]) => ({ path, before: CALC_REPO[path] ?? null, after }))),
    'test_weaken.diff': weaken.diff,
    'test_files.txt': `${weaken.testFiles.join('\n')}\n`,
    'test_script.sh': makeTestScript(profile),
    'test_parser.py': makeTestParser(),
    ...overrides,
  };
}

async function check(bundle: BundleFiles, extra: Partial<CheckBundleOptions> = {}): Promise<BundleCheckReport> {
  return checkBundle({ bundle, worktree: repo, profile, sandboxProvider: provider, ...extra });
}

function verdicts(report: BundleCheckReport): Record<string, boolean> {
  return Object.fromEntries(report.checks.map((c) => [c.name, c.passed]));
}

function evidence(report: BundleCheckReport, name: CheckName): string {
  return report.checks.find((c) => c.name === name)?.evidence ?? '';
}

describe('checkBundle', () => {
  it("counts as broken what the validator counts as FAIL_TO_PASS: a stale xfail that xpasses clean and xfails with the bug is neither broken nor passing", async () => {
    const stale = ['import pytest', 'from calc.ops import add', '', '', '@pytest.mark.xfail(reason="stale")', 'def test_add_stale():', '    assert add(1, 1) == 2', ''].join('\n');
    const tree = await writeTree({ ...CALC_REPO, 'tests/test_stale.py': stale });
    try {
      const treeProfile = await detectProfile(tree);
      const weaken = await makeTestWeaken({ readFile: treeReader(tree), failToPass: ADD_F2P, testFiles: treeProfile.testFiles });
      const bundle: BundleFiles = {
        'bug_inject.diff': makePatch([{ path: 'calc/ops.py', before: CALC_REPO['calc/ops.py'] ?? null, after: ADD_BUG['calc/ops.py'] }]),
        'test_weaken.diff': weaken.diff,
        'test_files.txt': `${weaken.testFiles.join('\n')}\n`,
        'test_script.sh': makeTestScript(treeProfile),
        'test_parser.py': makeTestParser(),
      };
      const report = await checkBundle({ bundle, worktree: tree, profile: treeProfile, sandboxProvider: provider });
      expect(report.passed).toBe(true);
      expect(report.brokenTests.sort()).toEqual(ADD_F2P);
      expect(report.passingTests).not.toContain('tests/test_stale.py::test_add_stale');
    } finally {
      await rm(tree, { recursive: true, force: true });
    }
  });

  it('passes a good single-file bundle on all seven checks, with evidence', async () => {
    const report = await check(await makeBundle(ADD_BUG, ADD_F2P));
    expect(report.checks.map((c) => [c.name, c.passed])).toEqual([
      ['files-and-paths', true],
      ['parser-output', true],
      ['clean-tests-pass', true],
      ['bug-changes-source', true],
      ['bug-breaks-tests', true],
      ['weakening-hides-bug', true],
      ['inverse-mutation', true],
    ]);
    expect(report.passed).toBe(true);
    expect(report.injectorConsistency).toBe(0);
    expect(report.brokenTests).toEqual(ADD_F2P);
    expect(evidence(report, 'clean-tests-pass')).toMatch(/^8 test\(s\) pass on the clean repo \(needs 1\); 1 failed, 2 skipped/);
    expect(evidence(report, 'bug-breaks-tests')).toMatch(/^3 of 8 clean-passing test\(s\) fail with the bug/);
    expect(evidence(report, 'weakening-hides-bug')).toMatch(/all 3 test\(s\) broken by the bug pass or are gone/);
    expect(evidence(report, 'inverse-mutation')).toMatch(/^single-file bug: reverting calc\/ops\.py/);
    expect(report.runs.map((run) => run.label)).toEqual(['clean repo', 'with the bug', 'with the bug and the weakening']);
  });

  it('passes a two-file bug where each file breaks its own test, reverting each file alone', async () => {
    const edits = {
      'calc/ops.py': (CALC_REPO['calc/ops.py'] ?? '').replace('return a * b', 'return a * b + 1'),
      'calc/fmt.py': (CALC_REPO['calc/fmt.py'] ?? '').replace('return x * 10', 'return x * 11'),
    };
    const report = await check(await makeBundle(edits, ['tests/test_fmt.py::test_scale', 'tests/test_ops.py::test_mul']));
    expect(report.passed).toBe(true);
    expect(evidence(report, 'inverse-mutation')).toBe(
      'reverting calc/fmt.py makes 1 of 2 failing test(s) pass (tests/test_fmt.py::test_scale); reverting calc/ops.py makes 1 of 2 failing test(s) pass (tests/test_ops.py::test_mul)',
    );
  });

  it('fails inverse mutation for a two-file bug with a dead-weight file', async () => {
    const edits = { ...ADD_BUG, 'calc/fmt.py': (CALC_REPO['calc/fmt.py'] ?? '').replace('"%d + %d = %d"', '"%d+%d=%d"') };
    const report = await check(await makeBundle(edits, ADD_F2P));
    expect(verdicts(report)['inverse-mutation']).toBe(false);
    expect(evidence(report, 'inverse-mutation')).toMatch(/reverting calc\/fmt\.py makes 0 of 3 failing test\(s\) pass — dead weight/);
    expect(report.injectorConsistency).toBe(-1);
  });

  it('reports fuzzy applies in the evidence', async () => {
    const bundle = await makeBundle(ADD_BUG, ADD_F2P);
    // Shift the bug's hunk header by two lines and change a context line: needs offset and fuzz.
    const drifted = bundle['bug_inject.diff'].replace('@@ -1,5 +1,5 @@', '@@ -3,5 +3,5 @@').replace(' def mul(a, b):', ' def mul(x, y):');
    const report = await check({ ...bundle, 'bug_inject.diff': drifted });
    expect(report.passed).toBe(true);
    expect(evidence(report, 'bug-changes-source')).toContain('calc/ops.py hunk 1 at offset -2 with fuzz 1');
    expect(report.offsets).toEqual([{ path: 'calc/ops.py', hunk: 1, offset: -2, fuzz: 1 }]);
  });

  describe('check 1: files and paths', () => {
    it('fails when a listed test file is missing', async () => {
      const report = await check(await makeBundle(ADD_BUG, ADD_F2P, { 'test_files.txt': 'tests/test_fmt.py\ntests/test_ops.py\ntests/test_gone.py\n' }));
      expect(verdicts(report)['files-and-paths']).toBe(false);
      expect(evidence(report, 'files-and-paths')).toBe('listed test files missing from the repo: tests/test_gone.py');
      expect(report.checks.find((c) => c.name === 'bug-breaks-tests')).toMatchObject({ ran: false, evidence: 'not run: check 1 failed' });
    });

    it('fails when the weakening touches a test file that is not listed', async () => {
      const report = await check(await makeBundle(ADD_BUG, ADD_F2P, { 'test_files.txt': 'tests/test_ops.py\n' }));
      expect(evidence(report, 'files-and-paths')).toBe('test_weaken.diff touches files not in test_files.txt: tests/test_fmt.py');
    });

    it('fails when the bug touches a test file', async () => {
      const edits = { ...ADD_BUG, 'tests/test_ops.py': (CALC_REPO['tests/test_ops.py'] ?? '').replace('== 12', '== 13') };
      const report = await check(await makeBundle(edits, ADD_F2P));
      expect(evidence(report, 'files-and-paths')).toBe('bug_inject.diff touches test files: tests/test_ops.py');
    });

    it('fails when a path leaves the repo or goes through a symlink', async () => {
      const escape = '--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-root\n+owned\n';
      const report = await check(await makeBundle(ADD_BUG, ADD_F2P, { 'bug_inject.diff': escape }));
      expect(evidence(report, 'files-and-paths')).toMatch(/^bug_inject\.diff: the diff of b\/\.\.\/\.\.\/etc\/passwd: the path "\.\.\/\.\.\/etc\/passwd" has a "\.\." segment/);
      expect(report.checks.find((c) => c.name === 'bug-changes-source')).toMatchObject({ ran: false });

      const throughLink = makePatch([{ path: 'calc/link.py', before: 'x\n', after: 'y\n' }]);
      const linked = await check(await makeBundle(ADD_BUG, ADD_F2P, { 'bug_inject.diff': throughLink }));
      expect(evidence(linked, 'files-and-paths')).toBe('calc/link.py is a symlink in the repo; patches never write through symlinks');
    });
  });

  it('check 2: fails on a parser that prints garbage', async () => {
    const report = await check(await makeBundle(ADD_BUG, ADD_F2P, { 'test_parser.py': 'print("all good, trust me")\n' }));
    expect(verdicts(report)['parser-output']).toBe(false);
    expect(evidence(report, 'parser-output')).toBe('clean repo: test_parser.py did not print one JSON object; it printed "all good, trust me"');
    expect(report.passed).toBe(false);
  });

  it('check 2: fails on a parser that invents statuses', async () => {
    const report = await check(await makeBundle(ADD_BUG, ADD_F2P, { 'test_parser.py': 'print(\'{"t": "ok"}\')\n' }));
    expect(evidence(report, 'parser-output')).toContain('gave test "t" the status "ok"');
  });

  it('check 3: a script that hangs is a failed check, within the time limit', async () => {
    const started = Date.now();
    const report = await check(await makeBundle(ADD_BUG, ADD_F2P, { 'test_script.sh': 'echo starting\nsleep 600\n' }), { limits: { scriptTimeoutMs: 2_000 } });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(evidence(report, 'clean-tests-pass')).toBe('clean repo: test_script.sh did not finish within 2s and was killed; last output: "starting"');
    expect(report.checks.find((c) => c.name === 'parser-output')).toMatchObject({ passed: false, ran: false });
  });

  it('check 3: a script that floods its output is a failed check', async () => {
    const report = await check(await makeBundle(ADD_BUG, ADD_F2P, { 'test_script.sh': 'yes flood\n' }), { limits: { maxOutputBytes: 64 * 1024, scriptTimeoutMs: 20_000 } });
    expect(evidence(report, 'clean-tests-pass')).toMatch(/^clean repo: test_script\.sh flooded its output: more than 65536 bytes \(output cut\); last output: " {0,4}/);
  });

  it('check 4: fails when the bug diff does not apply, with the reason', async () => {
    const stale = makePatch([{ path: 'calc/ops.py', before: 'def add(a, b):\n    return a + b + 0\n', after: 'def add(a, b):\n    return a - b\n' }]);
    const report = await check(await makeBundle(ADD_BUG, ADD_F2P, { 'bug_inject.diff': stale }));
    expect(evidence(report, 'bug-changes-source')).toMatch(/^bug_inject\.diff does not apply to the clean repo: hunk 1 of calc\/ops\.py .* found " {4}return a \+ b"/);
  });

  it('check 5: fails for a bug that breaks nothing', async () => {
    const edits = { 'calc/ops.py': `${CALC_REPO['calc/ops.py'] ?? ''}\n\ndef unused():\n    return 1\n` };
    const report = await check(await makeBundle(edits, ADD_F2P));
    expect(verdicts(report)).toMatchObject({ 'bug-changes-source': true, 'bug-breaks-tests': false });
    expect(evidence(report, 'bug-breaks-tests')).toBe('0 of 8 clean-passing test(s) fail with the bug (needs 1)');
    expect(report.checks.find((c) => c.name === 'weakening-hides-bug')?.ran).toBe(false);
  });

  it('check 6: fails when the weakening leaves the bug visible', async () => {
    const report = await check(await makeBundle(ADD_BUG, ['tests/test_ops.py::test_add']));
    expect(verdicts(report)['weakening-hides-bug']).toBe(false);
    expect(evidence(report, 'weakening-hides-bug')).toBe(
      '2 of 3 test(s) broken by the bug still fail or skip with the weakening: tests/test_fmt.py::test_show_sum (failed), tests/test_ops.py::test_add_cases[one plus two] (failed)',
    );
  });

  it('check 6: commenting tests out does not count', async () => {
    const source = CALC_REPO['tests/test_ops.py'] ?? '';
    const commented = makePatch([{ path: 'tests/test_ops.py', before: source, after: source.replace('    assert add(2, 3) == 5', '    # assert add(2, 3) == 5') }]);
    const report = await check(await makeBundle(ADD_BUG, ADD_F2P, { 'test_weaken.diff': commented, 'test_files.txt': 'tests/test_ops.py\n' }));
    expect(evidence(report, 'weakening-hides-bug')).toBe('test_weaken.diff comments tests out instead of deleting them: tests/test_ops.py: # assert add(2, 3) == 5');
  });

  it('check 6: a test file the weakening leaves unable to import does not hide the bug', async () => {
    // The whole of test_fmt.py goes (its show_sum test fails at import), not the bug.
    const source = CALC_REPO['tests/test_fmt.py'] ?? '';
    const broken = makePatch([{ path: 'tests/test_fmt.py', before: source, after: `${source}\nundefined_name.slow = 1\n` }]);
    const weaken = await makeBundle(ADD_BUG, ['tests/test_ops.py::test_add', 'tests/test_ops.py::test_add_cases[one plus two]']);
    const bundle = { ...weaken, 'test_weaken.diff': `${weaken['test_weaken.diff']}${broken}`, 'test_files.txt': 'tests/test_fmt.py\ntests/test_ops.py\n' };
    const report = await check(bundle);
    expect(verdicts(report)['weakening-hides-bug']).toBe(false);
    expect(evidence(report, 'weakening-hides-bug')).toBe('1 test file(s) no longer collect with the weakening (they do with the bug alone), which hides every test in them: tests/test_fmt.py');
  });

  it('applies the thresholds', async () => {
    const report = await check(await makeBundle(ADD_BUG, ADD_F2P), { thresholds: { minBroken: 4, minCleanPassing: 9 } });
    expect(verdicts(report)).toMatchObject({ 'clean-tests-pass': false, 'bug-breaks-tests': false });
  });

  it('never modifies the clean tree', async () => {
    const before = await treeReader(repo)('calc/ops.py');
    await check(await makeBundle(ADD_BUG, ADD_F2P));
    expect(await treeReader(repo)('calc/ops.py')).toBe(before);
  });
});

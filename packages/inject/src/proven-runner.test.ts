import { describe, expect, it } from 'vitest';
import type { PatchedFile } from '@envgen/patch';
import { createProvenRunner } from './proven-runner.js';

const bugFiles: PatchedFile[] = [
  { path: 'pkg/a.py', before: 'a = 1\n', after: 'a = 2\n' },
  { path: 'pkg/b.py', before: 'b = 1\n', after: 'b = 2\n' },
];
const clean = {
  ok: true as const,
  label: 'clean repo',
  seconds: 1,
  results: { 'tests/test_a.py::test_a': 'passed', 'tests/test_b.py::test_b': 'passed', 'tests/test_c.py::test_c': 'passed', 'tests/test_c.py::test_skip': 'skipped' } as const,
};

describe('createProvenRunner', () => {
  const selects: string[][] = [];
  const runner = createProvenRunner({
    clean,
    bugFiles,
    bugVerdict: { kind: 'instance', failToPass: ['tests/test_a.py::test_a', 'tests/test_b.py::test_b'], passToPass: ['tests/test_c.py::test_c'] },
    weakenedFiles: new Set(['tests/mixins.py']),
    // With pkg/b.py reverted, only test_a still fails.
    judge: async () => ({ kind: 'instance', failToPass: ['tests/test_a.py::test_a'], passToPass: ['tests/test_b.py::test_b', 'tests/test_c.py::test_c'] }),
    runSelected: async (_files, select, only) => {
      selects.push([...select], [...only]);
      return { ok: true, results: { 'tests/test_b.py::test_b': { outcome: 'passed', duration: 0 } } };
    },
  });

  it('states the bug run from its verdict and a reverted file from a validation, every broken test included (check 7)', async () => {
    expect(await runner.run('with the bug', bugFiles)).toMatchObject({ ok: true, results: { 'tests/test_a.py::test_a': 'failed', 'tests/test_b.py::test_b': 'failed', 'tests/test_c.py::test_c': 'passed' } });
    const reverted = await runner.run('with the bug but pkg/b.py reverted', bugFiles.slice(0, 1));
    expect(reverted).toMatchObject({ ok: true, results: { 'tests/test_a.py::test_a': 'failed', 'tests/test_b.py::test_b': 'passed' } });
  });

  it('runs the FAIL_TO_PASS tests still collected from the weakened files and those that collect one, the others as with the bug alone', async () => {
    const hidden = await runner.run('with the bug and the weakening', [...bugFiles, { path: 'tests/mixins.py', before: 'x\n', after: '\n' }]);
    expect(selects.slice(-2)).toEqual([
      ['tests/mixins.py', 'tests/test_a.py', 'tests/test_b.py'],
      ['tests/test_a.py::test_a', 'tests/test_b.py::test_b'],
    ]);
    // test_a is gone, test_b passes, test_c passes as with the bug alone.
    expect(hidden).toEqual({ ok: true, label: 'with the bug and the weakening', seconds: 0, results: { 'tests/test_b.py::test_b': 'passed', 'tests/test_c.py::test_c': 'passed' } });
  });

  it("with a cold runner (a verdict the warm interpreters could not reach), answers the clean and bug runs and leaves every other run to it", async () => {
    const runs: string[] = [];
    let closed = false;
    const coldRun = { ok: true as const, label: '', seconds: 2, results: { 'tests/test_a.py::test_a': 'passed' as const } };
    const cold = createProvenRunner({
      clean,
      bugFiles,
      bugVerdict: { kind: 'instance', failToPass: ['tests/test_a.py::test_a'], passToPass: [] },
      weakenedFiles: new Set(['tests/test_a.py']),
      judge: () => Promise.reject(new Error('no warm interpreter')),
      runSelected: () => Promise.reject(new Error('no warm interpreter')),
      cold: {
        run: async (label) => {
          runs.push(label);
          return { ...coldRun, label };
        },
        close: async () => {
          closed = true;
        },
      },
    });
    expect(await cold.run('clean repo', [])).toEqual(clean);
    expect(await cold.run('with the bug', bugFiles)).toMatchObject({ ok: true, results: { 'tests/test_a.py::test_a': 'failed' } });
    expect(await cold.run('with the bug and the weakening', [...bugFiles, { path: 'tests/test_a.py', before: 'x\n', after: '\n' }])).toMatchObject({ label: 'with the bug and the weakening', seconds: 2 });
    expect(await cold.run('with the bug but pkg/b.py reverted', bugFiles.slice(0, 1))).toMatchObject({ label: 'with the bug but pkg/b.py reverted', seconds: 2 });
    expect(runs).toEqual(['with the bug and the weakening', 'with the bug but pkg/b.py reverted']);
    await cold.close();
    expect(closed).toBe(true);
  });
});

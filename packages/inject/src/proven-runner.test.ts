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
      return { ok: true, results: { 'tests/test_b.py::test_b': { outcome: 'passed', duration: 0 } }, uncollected: [] };
    },
    openCold: () => Promise.reject(new Error('no cold run expected')),
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

  /** A cold runner that notes the runs it makes and whether it was closed. */
  function coldRunner() {
    const made = { opened: 0, runs: [] as string[], closed: false };
    const coldRun = { ok: true as const, label: '', seconds: 2, results: { 'tests/test_a.py::test_a': 'passed' as const } };
    const open = async () => {
      made.opened += 1;
      return {
        run: async (label: string) => {
          made.runs.push(label);
          return { ...coldRun, label };
        },
        close: async () => {
          made.closed = true;
        },
      };
    };
    return { made, open };
  }

  it('with coldOnly (a verdict the warm interpreters could not reach), answers the clean and bug runs and leaves every other run to one cold runner', async () => {
    const { made, open } = coldRunner();
    const cold = createProvenRunner({
      clean,
      bugFiles,
      bugVerdict: { kind: 'instance', failToPass: ['tests/test_a.py::test_a'], passToPass: [] },
      weakenedFiles: new Set(['tests/test_a.py']),
      judge: () => Promise.reject(new Error('no warm interpreter')),
      runSelected: () => Promise.reject(new Error('no warm interpreter')),
      openCold: open,
      coldOnly: true,
    });
    expect(await cold.run('clean repo', [])).toEqual(clean);
    expect(await cold.run('with the bug', bugFiles)).toMatchObject({ ok: true, results: { 'tests/test_a.py::test_a': 'failed' } });
    expect(await cold.run('with the bug and the weakening', [...bugFiles, { path: 'tests/test_a.py', before: 'x\n', after: '\n' }])).toMatchObject({ label: 'with the bug and the weakening', seconds: 2 });
    expect(await cold.run('with the bug but pkg/b.py reverted', bugFiles.slice(0, 1))).toMatchObject({ label: 'with the bug but pkg/b.py reverted', seconds: 2 });
    expect(made.runs).toEqual(['with the bug and the weakening', 'with the bug but pkg/b.py reverted']);
    expect(made.opened).toBe(1);
    await cold.close();
    expect(made.closed).toBe(true);
  });

  it('runs the weakened tree cold when no warm interpreter could (a checkpoint declined the change), never failing the check for it', async () => {
    const { made, open } = coldRunner();
    const declining = createProvenRunner({
      clean,
      bugFiles,
      bugVerdict: { kind: 'instance', failToPass: ['tests/test_a.py::test_a'], passToPass: [] },
      weakenedFiles: new Set(['tests/test_a.py']),
      judge: async () => ({ kind: 'rejected', reason: 'no-failing-test', detail: 'no test fails' }),
      runSelected: async () => ({ ok: false, reason: 'pkg/a.py: only a fresh interpreter runs it changed (pkg/a.py:f ran when pytest started)' }),
      openCold: open,
    });
    const weakened = [...bugFiles, { path: 'tests/test_a.py', before: 'x\n', after: '\n' }];
    expect(await declining.run('with the bug and the weakening', weakened)).toMatchObject({ ok: true, label: 'with the bug and the weakening', seconds: 2 });
    // Runs a warm interpreter answers stay warm.
    expect(await declining.run('with the bug but pkg/b.py reverted', bugFiles.slice(0, 1))).toMatchObject({ ok: true, seconds: 0 });
    expect(made.runs).toEqual(['with the bug and the weakening']);
    await declining.close();
    expect(made.closed).toBe(true);
  });

  it("runs the weakened tree cold where a test the weakening should hide still fails in the selection: the bundle's full run decides", async () => {
    const { made, open } = coldRunner();
    const selected = createProvenRunner({
      clean,
      bugFiles,
      bugVerdict: { kind: 'instance', failToPass: ['tests/test_a.py::test_a'], passToPass: [] },
      weakenedFiles: new Set(['tests/test_b.py']),
      judge: () => Promise.reject(new Error('no judge expected')),
      // The weakened module carries the deselection, but imports only once other files were collected.
      runSelected: async () => ({ ok: true, results: { 'tests/test_a.py::test_a': { outcome: 'failed', duration: 0 } }, uncollected: [] }),
      openCold: open,
    });
    expect(await selected.run('with the bug and the weakening', [...bugFiles, { path: 'tests/test_b.py', before: 'x\n', after: '\n' }])).toMatchObject({ ok: true, seconds: 2, results: { 'tests/test_a.py::test_a': 'passed' } });
    expect(made.runs).toEqual(['with the bug and the weakening']);
    await selected.close();
  });

  it('runs the weakened tree cold where a selected file that collected with the bug alone did not: the full run says what the weakening did to it (check 6)', async () => {
    const { made, open } = coldRunner();
    const options = {
      clean,
      bugFiles,
      bugVerdict: { kind: 'instance' as const, failToPass: ['tests/test_a.py::test_a'], passToPass: ['tests/test_c.py::test_c'] },
      weakenedFiles: new Set(['tests/test_a.py', 'tests/test_c.py']),
      judge: () => Promise.reject(new Error('no judge expected')),
      openCold: open,
    };
    const weakened = [...bugFiles, { path: 'tests/test_c.py', before: 'x\n', after: '\n' }];
    // test_c passed with the bug: a deleted test's name still used at module level, say, and the module no longer imports.
    const broken = createProvenRunner({ ...options, runSelected: async () => ({ ok: true, results: {}, uncollected: ['tests/test_c.py'] }) });
    await broken.run('with the bug and the weakening', weakened);
    expect(made.runs).toEqual(['with the bug and the weakening']);
    await broken.close();
    // Every test of test_a.py is broken by the bug, which may stop its import too: its tests are gone, warm.
    const gone = createProvenRunner({ ...options, runSelected: async () => ({ ok: true, results: {}, uncollected: ['tests/test_a.py'] }) });
    expect(await gone.run('with the bug and the weakening', weakened)).toMatchObject({ ok: true, results: { 'tests/test_c.py::test_c': 'passed' } });
    expect(made.runs).toHaveLength(1);
    await gone.close();
  });

  it('closes without a cold runner it never opened', async () => {
    const { made, open } = coldRunner();
    const unused = createProvenRunner({ clean, bugFiles, bugVerdict: { kind: 'instance', failToPass: ['tests/test_a.py::test_a'], passToPass: [] }, weakenedFiles: new Set(), judge: () => Promise.reject(new Error('unused')), runSelected: () => Promise.reject(new Error('unused')), openCold: open });
    await unused.close();
    expect(made).toEqual({ opened: 0, runs: [], closed: false });
  });
});

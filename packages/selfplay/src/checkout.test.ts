import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makePatch } from '@envgen/patch';
import { writeFixtureRepo } from '../../../test/support/fixture-repo.js';
import { diffCheckout, prepareCheckout } from './checkout.js';
import { makeHigherOrderCandidate } from './higher-order.js';

const scratch = mkdtempSync(join(tmpdir(), 'envgen-selfplay-checkout-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const CLEAN = 'def add(a, b):\n    return a + b\n';
const BUGGY = 'def add(a, b):\n    return a - b\n';
const TESTS = 'from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n\ndef test_zero():\n    assert add(0, 0) == 0\n';
const worktree = writeFixtureRepo({ 'calc.py': CLEAN, 'tests/test_calc.py': TESTS }, { git: true });
const bug = makePatch([{ path: 'calc.py', before: CLEAN, after: BUGGY }]);
const weaken = makePatch([{ path: 'tests/test_calc.py', before: TESTS, after: 'from calc import add\n\ndef test_zero():\n    assert add(0, 0) == 0\n' }]);

describe('the repair checkout and its diff', () => {
  it('holds bug + weakening as the one commit of a fresh repo, and diffs what the agent changed without following symlinks', async () => {
    const checkout = await prepareCheckout({ worktree, dir: join(scratch, 'repo'), diffs: [bug, weaken] });
    expect(execFileSync('git', ['-C', checkout.dir, 'log', '--format=%s %P'], { encoding: 'utf8' })).toBe('Initial commit \n');
    expect(execFileSync('git', ['-C', checkout.dir, 'status', '--porcelain'], { encoding: 'utf8' })).toBe('');
    expect(checkout.initial.get('calc.py')?.toString()).toBe(BUGGY);
    expect((await diffCheckout(checkout)).patch).toBe('');

    writeFileSync(join(checkout.dir, 'calc.py'), CLEAN);
    writeFileSync(join(checkout.dir, 'repro.py'), 'print(1)\n');
    mkdirSync(join(checkout.dir, '__pycache__'));
    writeFileSync(join(checkout.dir, '__pycache__', 'calc.cpython-311.pyc'), Buffer.from([0, 1, 2]));
    symlinkSync('/etc/passwd', join(checkout.dir, 'passwd.py'));
    writeFileSync(join(checkout.dir, 'blob.bin'), Buffer.from([0xff, 0xfe]));
    const diff = await diffCheckout(checkout);
    expect(diff.files.map((file) => file.path)).toEqual(['calc.py', 'repro.py']);
    expect(diff.patch).toBe(makePatch([{ path: 'calc.py', before: BUGGY, after: CLEAN }, { path: 'repro.py', before: null, after: 'print(1)\n' }]));
    expect(diff.ignored).toEqual(['passwd.py (not a regular file)', 'blob.bin (binary)']);
    expect(diff.patch).not.toContain('root:');
  });
});

describe('makeHigherOrderCandidate', () => {
  const parent = { instance_id: 'local__calc.00000000.change_operator__00000000', repo: 'local/calc', base_commit: '0'.repeat(40), patch: bug, FAIL_TO_PASS: ['tests/test_calc.py::test_add'], PASS_TO_PASS: ['tests/test_calc.py::test_zero'], strategy: 'change_operator', family: 'procedural' as const, seed: 3, entities: ['calc.py:add'], description: 'x', created_at: '2020-01-01T00:00:00Z' };

  it('puts a failed repair on top of its bug as an order-2 candidate over the clean tree', async () => {
    const repair = makePatch([{ path: 'calc.py', before: BUGGY, after: 'def add(a, b):\n    return a - b - 0\n' }]);
    const made = await makeHigherOrderCandidate(parent, repair, worktree);
    expect(made.ok).toBe(true);
    if (!made.ok) return;
    expect(made.planned.candidate).toMatchObject({ strategy: 'higher_order', family: 'procedural', order: 2, parent: parent.instance_id });
    expect(made.planned.candidate.patch).toBe(makePatch([{ path: 'calc.py', before: CLEAN, after: 'def add(a, b):\n    return a - b - 0\n' }]));
    expect(made.planned.files).toEqual([{ path: 'calc.py', before: CLEAN, after: 'def add(a, b):\n    return a - b - 0\n' }]);
  });

  it('makes none above order 2, from an empty patch, or when the repair gives back the clean tree', async () => {
    expect(await makeHigherOrderCandidate({ ...parent, order: 2 }, 'x', worktree)).toMatchObject({ ok: false, reason: expect.stringMatching(/order 2, the highest/) });
    expect(await makeHigherOrderCandidate(parent, '', worktree)).toMatchObject({ ok: false, reason: 'the failed repair changed nothing' });
    const fix = makePatch([{ path: 'calc.py', before: BUGGY, after: CLEAN }]);
    expect(await makeHigherOrderCandidate(parent, fix, worktree)).toMatchObject({ ok: false, reason: 'the failed repair restores the clean tree' });
  });
});

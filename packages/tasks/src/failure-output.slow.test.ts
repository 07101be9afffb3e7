import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Profile } from '@envgen/repo';
import { createSandboxProvider } from '@envgen/sandbox';
import { captureFailureOutput } from './failure-output.js';

const CALC = 'def spin(n):\n    while n > 0:\n        n -= 1\n    return n\n';
const TESTS = 'from pkg import calc\n\n\ndef test_spin():\n    assert calc.spin(3) == 0\n';
/** A bug that makes test_spin loop for ever. */
const HANG = 'diff --git a/pkg/calc.py b/pkg/calc.py\n--- a/pkg/calc.py\n+++ b/pkg/calc.py\n@@ -1,4 +1,4 @@\n def spin(n):\n     while n > 0:\n-        n -= 1\n+        n -= 0\n     return n\n';

const root = mkdtempSync(join(tmpdir(), 'envgen-failure-output-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

for (const [path, text] of Object.entries({ 'pkg/__init__.py': '', 'pkg/calc.py': CALC, 'tests/test_calc.py': TESTS })) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

// The profile's own limits are a minute: what a test gets when nothing better is known.
const profile: Profile = {
  python: '/usr/bin/python3', env: {}, aptPackages: [], install: [], testArgs: ['tests'], testGlobs: ['tests/**'],
  sourceFiles: ['pkg/__init__.py', 'pkg/calc.py'], testFiles: ['tests/test_calc.py'], deselect: [], timeoutMs: 60_000, testTimeoutMs: 60_000, provenance: {},
};

describe('the failure output of a bug that makes its failing test hang', () => {
  it('stops the test at the limit it had when the bug was validated, and shows why', async () => {
    const output = await captureFailureOutput({
      provider: createSandboxProvider('local'),
      worktree: root,
      profile,
      patch: HANG,
      nodeIds: ['tests/test_calc.py::test_spin'],
      limits: { timeoutMs: 20_000, perTestSeconds: { 'tests/test_calc.py::test_spin': 1 } },
    });
    // Before, the cold run had only the profile's minute per test (a minute per statement).
    expect(output).toContain('envgen: test exceeded its 1.0 s limit');
    expect(output).toMatch(/1 failed/);
    expect(readFileSync(join(root, 'pkg/calc.py'), 'utf8')).toBe(CALC);
  });
});

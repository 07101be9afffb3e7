import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { WARM_SUPPORT_DIR } from './warm-server.js';

const TESTS_DIR = fileURLToPath(new URL('../python-tests', import.meta.url));

describe("the warm server's Python modules", () => {
  it("pass their own unittest suite under Debian's python3", () => {
    const run = spawnSync('/usr/bin/python3', ['-m', 'unittest', 'discover', '-s', TESTS_DIR, '-v'], {
      encoding: 'utf8',
      env: { ...process.env, PYTHONPATH: WARM_SUPPORT_DIR, PYTHONDONTWRITEBYTECODE: '1' },
    });
    expect(run.stderr).toMatch(/\nOK\s*$/);
    expect(run.stderr).toMatch(/Ran [1-9]\d* tests/);
    expect(run.status).toBe(0);
  });
});

import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '@envgen/config';
import { createLogger, silentLogger } from '@envgen/core';
import { createProgress, runInject } from '@envgen/cli';
import { openPool } from '@envgen/pool';
import { writeFixtureRepo } from '../support/fixture-repo.js';

const BUGGY = 'def clamp(x, lo, hi):\n    return min(lo, max(x, hi))\n\n\ndef area(w, h):\n    return w * h\n';
const FIXED = 'def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n\n\ndef area(w, h):\n    return w * h\n';
const TESTS = [
  'from calc import area, clamp',
  '',
  '',
  'def test_clamp():',
  '    assert clamp(5, 0, 3) == 3',
  '    assert clamp(-1, 0, 3) == 0',
  '',
  '',
  'def test_area():',
  '    assert area(2, 3) == 6',
  '',
].join('\n');

function commitAll(repo: string, message: string): void {
  const env = { ...process.env, GIT_AUTHOR_NAME: 'f', GIT_AUTHOR_EMAIL: 'f@x.invalid', GIT_COMMITTER_NAME: 'f', GIT_COMMITTER_EMAIL: 'f@x.invalid' };
  execFileSync('git', ['-C', repo, 'add', '-A'], { env });
  execFileSync('git', ['-C', repo, 'commit', '-qm', message], { env });
}

describe('envgen inject on a repo with git history', () => {
  it('re-applies the past version of a function the last commit fixed, and the tests prove it', async () => {
    const repo = writeFixtureRepo({ 'calc.py': BUGGY, 'tests/test_calc.py': TESTS }, { git: true, name: 'calc' });
    writeFileSync(join(repo, 'calc.py'), FIXED);
    commitAll(repo, 'fix clamp');
    const home = mkdtempSync(join(tmpdir(), 'envgen-home-'));
    const settings = resolveConfig({ env: { ENVGEN_HOME: home }, cwd: home });

    const report = await runInject({ repo, count: 3, seed: 1, strategies: ['history_revert'], combine: 0 }, settings, silentLogger, createProgress({ quiet: true }));
    expect(report.byStrategy['history_revert']).toMatchObject({ kept: 1 });
    const pool = openPool(home);
    try {
      const [entry] = [...pool.listInstances({ strategy: 'history_revert' })];
      expect(entry?.instance.family).toBe('history');
      expect(entry?.instance.FAIL_TO_PASS).toEqual(['tests/test_calc.py::test_clamp']);
      expect(entry?.instance.PASS_TO_PASS).toEqual(['tests/test_calc.py::test_area']);
      expect(entry?.instance.patch).toContain('-    return max(lo, min(x, hi))\n+    return min(lo, max(x, hi))');
    } finally {
      pool.close();
    }
    expect(report.history).toEqual({ versions: 1, files: 1, shallow: false });
  });

  it('says when the repo is a shallow clone, whose history holds no past version to re-apply', async () => {
    const repo = writeFixtureRepo({ 'calc.py': BUGGY, 'tests/test_calc.py': TESTS }, { git: true, name: 'calc' });
    writeFileSync(join(repo, 'calc.py'), FIXED);
    commitAll(repo, 'fix clamp');
    const shallow = join(mkdtempSync(join(tmpdir(), 'envgen-shallow-')), 'calc');
    execFileSync('git', ['clone', '-q', '--depth', '1', `file://${repo}`, shallow]);
    const home = mkdtempSync(join(tmpdir(), 'envgen-home-'));
    const settings = resolveConfig({ env: { ENVGEN_HOME: home }, cwd: home });
    const warnings: string[] = [];
    const logger = createLogger({ level: 'warn', write: (line) => warnings.push(line) });

    const report = await runInject({ repo: shallow, count: 3, seed: 1, strategies: ['history_revert'], combine: 0 }, settings, logger, createProgress({ quiet: true }));
    expect(report.history).toEqual({ versions: 0, files: 0, shallow: true });
    expect(report.tried).toBe(0);
    expect(warnings.join('\n')).toContain('the repository is a shallow clone: history_revert candidates come only from the commits it holds');
  });
});

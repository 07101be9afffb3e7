import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeFixtureRepo } from '../../../test/support/fixture-repo.js';
import { cloneWithHistory } from './injector-rollout.js';

const scratch = mkdtempSync(join(tmpdir(), 'envgen-injector-clone-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=fixture', '-c', 'user.email=fixture@example.invalid', '-c', 'protocol.file.allow=always', ...args], { cwd, encoding: 'utf8' }).trim();
}

describe("the injector's clone of the checkout", () => {
  it('has the history, no remote, and the files of the checkout’s submodules, which the suite reads', async () => {
    const data = writeFixtureRepo({ 'cases/one.toml': 'x = 1\n' }, { git: true, name: 'cases' });
    const worktree = writeFixtureRepo({ 'calc.py': 'X = 1\n' }, { git: true, name: 'calc' });
    git(worktree, 'submodule', 'add', '--quiet', data, 'tests/cases');
    git(worktree, 'commit', '--quiet', '-m', 'cases');
    const commit = git(worktree, 'rev-parse', 'HEAD');
    const dir = join(scratch, 'clone');
    await cloneWithHistory(worktree, commit, dir);
    expect(git(dir, 'log', '--format=%s')).toBe('cases\nfixture');
    expect(git(dir, 'remote')).toBe('');
    // Before, the clone had the gitlink's empty directory.
    expect(readFileSync(join(dir, 'tests', 'cases', 'cases', 'one.toml'), 'utf8')).toBe('x = 1\n');
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });
});

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isEnvgenError } from '@envgen/core';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireRepo } from './acquire.js';
import { detectProfile } from './profile.js';
import { loadProfileOverrides, shippedProfilesDir } from './profile-overrides.js';
import { parseRepoSpec } from './spec.js';
import { createWorktree } from './worktree.js';

// Shared, gitignored cache: reruns (and other packages' tests) reuse the indexes and snapshots.
const home = join(import.meta.dirname, '..', '..', '..', '.cache', 'envgen-home');
const scratch = mkdtempSync(join(tmpdir(), 'envgen-debian-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function mirrorState(mirror: string): string {
  const refs = execFileSync('git', ['--git-dir', mirror, 'for-each-ref'], { encoding: 'utf8' });
  const objects = execFileSync('git', ['--git-dir', mirror, 'count-objects', '-v'], { encoding: 'utf8' });
  return refs + objects;
}

async function errorOf(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: Error) => error,
  );
}

describe('debian: repos from the real mirror', () => {
  it('acquires toolz as a deterministic, cached snapshot with its test packages', async () => {
    const first = await acquireRepo(parseRepoSpec('debian:toolz'), { home });
    expect(first.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(first.owner).toBe('debian');
    expect(first.name).toBe('toolz');
    expect(first.aptPackages).toEqual(['python3-pytest']);
    const pinned = await acquireRepo(parseRepoSpec('debian:toolz=0.12.0-1'), { home });
    expect(pinned.commit).toBe(first.commit);
    const message = execFileSync('git', ['--git-dir', first.mirror, 'log', '-1', '--format=%s', first.commit], { encoding: 'utf8' });
    expect(message).toContain('debian:toolz 0.12.0-1');
  });

  it('makes a fast worktree without touching the mirror', async () => {
    const repo = await acquireRepo(parseRepoSpec('debian:toolz'), { home });
    const before = mirrorState(repo.mirror);
    const started = performance.now();
    const worktree = await createWorktree(repo, { home: scratch });
    const elapsed = performance.now() - started;
    expect(elapsed).toBeLessThan(1000);
    expect(execFileSync('git', ['-C', worktree.path, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim()).toBe(repo.commit);
    expect(mirrorState(repo.mirror)).toBe(before);
    await worktree.remove();
  });

  it('names the available versions for an unknown version', async () => {
    const error = await errorOf(acquireRepo(parseRepoSpec('debian:toolz=9.9-1'), { home }));
    expect(isEnvgenError(error, 'repo-unavailable')).toBe(true);
    expect(error.message).toContain('available: 0.12.0-1');
  });

  it('explains an unknown source and points from a binary package to its source', async () => {
    const unknown = await errorOf(acquireRepo(parseRepoSpec('debian:no-such-source-envgen'), { home }));
    expect(isEnvgenError(unknown, 'repo-unavailable')).toBe(true);
    expect(unknown.message).toContain('no source package "no-such-source-envgen"');
    const binary = await errorOf(acquireRepo(parseRepoSpec('debian:python3-toml'), { home }));
    expect(binary.message).toContain('debian:python-toml');
  });

  const corpus: Array<{ source: string; testArgs: string[]; env: Record<string, string>; apt: string[] }> = [
    { source: 'toolz', testArgs: ['toolz'], env: {}, apt: ['python3-pytest'] },
    // markupsafe configures testpaths: no paths, so pytest applies them as plain pytest does;
    // its filterwarnings = error would make an unknown config key stop every session; its
    // setup.py builds its C speedups, which need a compiler and Python's headers.
    { source: 'markupsafe', testArgs: ['-W', 'ignore::pytest.PytestConfigWarning'], env: { PYTHONPATH: 'src' }, apt: ['g++', 'gcc', 'python3-dev', 'python3-pytest', 'python3-setuptools'] },
    { source: 'python-text-unidecode', testArgs: ['test_unidecode.py'], env: { PYTHONPATH: 'src' }, apt: ['python3-pytest'] },
    { source: 'python-json-patch', testArgs: ['tests.py'], env: {}, apt: ['python3-json-pointer', 'python3-pytest'] },
    { source: 'python-toml', testArgs: ['tests'], env: {}, apt: ['python3-pytest'] },
    { source: 'yamllint', testArgs: ['tests'], env: {}, apt: ['python3-nose', 'python3-pathspec', 'python3-pytest', 'python3-yaml'] },
    { source: 'python-ordered-set', testArgs: [], env: {}, apt: ['python3-pytest'] },
    { source: 'python-colorama', testArgs: ['colorama'], env: {}, apt: ['python3-pytest'] },
    { source: 'python-jmespath', testArgs: ['tests'], env: {}, apt: ['python3-pytest'] },
    { source: 'python-xmltodict', testArgs: ['tests'], env: {}, apt: ['python3-coverage', 'python3-nose2', 'python3-pytest'] },
  ];
  it.each(corpus)('detects the profile of $source', async ({ source, testArgs, env, apt }) => {
    const repo = await acquireRepo(parseRepoSpec(`debian:${source}`), { home });
    const worktree = await createWorktree(repo, { home: scratch });
    try {
      const overrides = await loadProfileOverrides(repo.owner, repo.name, { profilesDirs: [shippedProfilesDir()] });
      const profile = await detectProfile(worktree.path, { aptPackages: repo.aptPackages, overrides });
      expect(profile.testArgs).toEqual(testArgs);
      expect(profile.env).toEqual({ PYTHONHASHSEED: '0', ...env });
      expect(profile.aptPackages).toEqual(apt);
      expect(profile.testFiles.length).toBeGreaterThan(0);
      expect(profile.sourceFiles.length).toBeGreaterThan(0);
      expect(profile.sourceFiles.some((file) => profile.testFiles.includes(file))).toBe(false);
    } finally {
      await worktree.remove();
    }
  });
});

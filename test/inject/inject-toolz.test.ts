import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '@envgen/config';
import { silentLogger } from '@envgen/core';
import { checkBundle } from '@envgen/bundle';
import { createProgress, resolveProfile, runInject } from '@envgen/cli';
import { openPool } from '@envgen/pool';
import { acquireRepo, createWorktree, parseRepoSpec } from '@envgen/repo';
import { createSandboxProvider } from '@envgen/sandbox';
import { freshHomeFromCorpus } from '../support/corpus.js';

const quiet = createProgress({ quiet: true });

describe('envgen inject on Debian toolz', () => {
  const home = freshHomeFromCorpus();
  const settings = resolveConfig({ env: { ENVGEN_HOME: home }, cwd: home });
  const options = { repo: 'debian:toolz', count: 16, seed: 7, combine: 2 };

  it('keeps proven bugs whose bundles pass the seven checks on their own, and a rerun adds nothing twice', async () => {
    const first = await runInject(options, settings, silentLogger, quiet);
    expect(first.tried).toBeGreaterThanOrEqual(16);
    expect(first.kept).toBeGreaterThan(0);
    expect(first.known).toBe(0);
    expect(first.kept + Object.values(first.rejected).reduce((sum, count) => sum + count, 0)).toBe(first.tried);
    expect(first.sites.covered).toBeGreaterThan(100);
    for (const id of first.instanceIds) expect(id).toMatch(/^debian__toolz\.[0-9a-f]{8}\.[a-z_]+__[0-9a-f]{8}$/);

    const pool = openPool(home);
    try {
      expect(pool.count({ repo: 'debian/toolz' })).toBe(first.kept);
      const instance = pool.getInstance(first.instanceIds[0] as string);
      expect(instance?.FAIL_TO_PASS.length).toBeGreaterThan(0);
      expect(instance?.PASS_TO_PASS.length).toBeGreaterThan(0);

      // An independent check of one stored bundle with its own script and parser, in the sandbox.
      const repo = await acquireRepo(parseRepoSpec('debian:toolz'), { home });
      const worktree = await createWorktree(repo, { home });
      try {
        const profile = await resolveProfile(worktree.path, repo, settings, createSandboxProvider('local'));
        const bundle = pool.readBundle(first.instanceIds[0] as string);
        const report = await checkBundle({ bundle, worktree: worktree.path, profile, sandboxProvider: createSandboxProvider('local') });
        expect(report.checks.filter((check) => !check.passed)).toEqual([]);
        expect([...report.brokenTests].sort()).toEqual(instance?.FAIL_TO_PASS);
        expect(await readFile(join(pool.bundleDir(instance?.instance_id ?? ''), 'bug_inject.diff'), 'utf8')).toBe(instance?.patch);
      } finally {
        await worktree.remove();
      }
    } finally {
      pool.close();
    }

    const again = await runInject(options, settings, silentLogger, quiet);
    expect(again.kept).toBe(0);
    expect(again.known).toBe(first.kept);
    expect(again.tried).toBe(first.tried);
    expect(again.rejected).toEqual(first.rejected);
    const reopened = openPool(home);
    expect(reopened.count({ repo: 'debian/toolz' })).toBe(first.kept);
    reopened.close();
  });
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_ENV, checkSandboxOptions, resolveExecSettings, resolveLimits } from './exec-settings.js';
import { DEFAULT_LIMITS } from './types.js';

describe('resolveLimits', () => {
  it('layers defaults, sandbox and exec limits', () => {
    expect(resolveLimits({ timeoutMs: 10, maxProcesses: 5 }, { timeoutMs: 20 })).toEqual({
      ...DEFAULT_LIMITS,
      timeoutMs: 20,
      maxProcesses: 5,
    });
  });

  it('rejects limits that are not positive integers', () => {
    expect(() => resolveLimits({ memoryBytes: 0 })).toThrow(/memoryBytes/);
    expect(() => resolveLimits({ timeoutMs: 1.5 })).toThrow(/timeoutMs/);
  });
});

describe('resolveExecSettings', () => {
  it('layers the environment and resolves cwd inside the worktree', () => {
    const settings = resolveExecSettings({ worktree: '/w', env: { A: 'sandbox', B: 'sandbox' } }, { env: { B: 'exec' }, cwd: 'pkg/sub' }, '/tmp/repo');
    expect(settings.env).toEqual({ ...BASE_ENV, A: 'sandbox', B: 'exec' });
    expect(settings.cwd).toBe('/tmp/repo/pkg/sub');
    expect(resolveExecSettings({ worktree: '/w' }, {}, '/tmp/repo').cwd).toBe('/tmp/repo');
  });

  it('refuses a cwd that leaves the worktree', () => {
    for (const cwd of ['..', 'a/../../b', '/etc', '../repo-other']) {
      expect(() => resolveExecSettings({ worktree: '/w' }, { cwd }, '/tmp/repo')).toThrow(expect.objectContaining({ code: 'path-escape' }));
    }
  });
});

describe('checkSandboxOptions', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'envgen-sandbox-options-'));
    await writeFile(path.join(dir, 'file'), '');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('accepts mounts onto distinct targets under /tmp', async () => {
    const mounts = [{ source: '/usr/lib', target: '/tmp/plugin', readonly: true }];
    await expect(checkSandboxOptions({ worktree: dir, mounts })).resolves.toEqual(mounts);
  });

  it('rejects a missing or non-directory worktree and bad mount targets', async () => {
    await expect(checkSandboxOptions({ worktree: path.join(dir, 'missing') })).rejects.toMatchObject({ code: 'usage' });
    await expect(checkSandboxOptions({ worktree: path.join(dir, 'file') })).rejects.toMatchObject({ code: 'usage' });
    await expect(checkSandboxOptions({ worktree: 'relative' })).rejects.toMatchObject({ code: 'usage' });
    for (const target of ['/etc/x', '/tmp/repo', '/tmp/a/../../etc', 'tmp/x']) {
      await expect(
        checkSandboxOptions({ worktree: dir, mounts: [{ source: '/usr', target, readonly: true }] }),
      ).rejects.toMatchObject({ code: 'usage' });
    }
    const twice = { source: '/usr', target: '/tmp/same', readonly: true };
    await expect(checkSandboxOptions({ worktree: dir, mounts: [twice, twice] })).rejects.toMatchObject({ code: 'usage' });
  });
});

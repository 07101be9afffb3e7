import { lstat, mkdtemp, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeSandboxContract } from './contract.js';
import { uniqueTarget } from './exec-settings.js';
import { createNoneProvider } from './none.js';

// No isolation by design: only the limits, output and worktree parts of the contract apply.
describeSandboxContract('none', { isolated: false });

describe('none backend mounts', () => {
  const provider = createNoneProvider();
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'envgen-none-mounts-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('opens sandboxes at once that mount one directory at one target and others each at its own, as the two runs of a baseline do', async () => {
    const shared = await mkdtemp(join(root, 'plugin-'));
    await writeFile(join(shared, 'name'), 'plugin');
    const sharedTarget = uniqueTarget('/tmp/envgen-test-shared');
    const mounts = await Promise.all(
      ['a', 'b'].map(async (name) => {
        const out = await mkdtemp(join(root, `out-${name}-`));
        return [
          { source: shared, target: sharedTarget, readonly: true },
          { source: out, target: uniqueTarget('/tmp/envgen-test-out'), readonly: false },
        ];
      }),
    );
    const worktree = await mkdtemp(join(root, 'tree-'));
    const sandboxes = await Promise.all(mounts.map((list) => provider.open({ worktree, mounts: list })));
    for (const [index, sandbox] of sandboxes.entries()) {
      const out = mounts[index]?.[1];
      const run = await sandbox.exec(['sh', '-c', `cat ${sharedTarget}/name > ${out?.target}/seen`]);
      expect(run.exitCode).toBe(0);
      expect(await readlink(out?.target ?? '')).toBe(out?.source);
    }
    // The first to close leaves the shared link to the other.
    await sandboxes[0]?.dispose();
    expect(await readlink(sharedTarget)).toBe(shared);
    await expect(lstat(mounts[0]?.[1]?.target ?? '')).rejects.toMatchObject({ code: 'ENOENT' });
    await sandboxes[1]?.dispose();
    await expect(lstat(sharedTarget)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a target another open sandbox links elsewhere, and leaves that link alone', async () => {
    const [first, second] = await Promise.all([mkdtemp(join(root, 'first-')), mkdtemp(join(root, 'second-'))]);
    const target = uniqueTarget('/tmp/envgen-test-clash');
    const worktree = await mkdtemp(join(root, 'tree-'));
    const holder = await provider.open({ worktree, mounts: [{ source: first, target, readonly: true }] });
    try {
      await expect(provider.open({ worktree, mounts: [{ source: second, target, readonly: true }] })).rejects.toMatchObject({
        code: 'sandbox-failed',
        message: expect.stringContaining(`another open sandbox links it to ${first}`),
      });
      expect(await readlink(target)).toBe(first);
    } finally {
      await holder.dispose();
    }
  });
});

import { mkdir, readdir, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createExecCgroup, detectCgroupLayout, removeStaleCgroups } from './cgroup.js';

describe('per-command cgroups', async () => {
  const layout = await detectCgroupLayout();

  it.skipIf(layout.kind === 'unavailable')('are created with limits, removed after, and stale ones are swept', async () => {
    if (layout.kind === 'unavailable') return;
    const parents = layout.kind === 'v1' ? [layout.memoryParent, layout.pidsParent] : [layout.parent];
    const cgroup = await createExecCgroup(layout, { memoryBytes: 64 * 1024 ** 2, pidsMax: 8 });
    expect(cgroup.procsFiles.length).toBe(parents.length);
    expect(await cgroup.readEvents()).toEqual({ memoryLimitHit: false, processLimitHit: false });
    await cgroup.remove();
    for (const file of cgroup.procsFiles) {
      expect(await readdir(path.dirname(path.dirname(file)))).not.toContain(path.basename(path.dirname(file)));
    }

    // pid 2^22 + 1 is above the kernel's pid_max ceiling: that owner is certainly gone.
    const stale = 'envgen-4194305-1';
    const live = `envgen-${process.pid}-999999`;
    for (const parent of parents) {
      await mkdir(path.join(parent, stale));
      await mkdir(path.join(parent, live));
    }
    await removeStaleCgroups(layout);
    for (const parent of parents) {
      const names = await readdir(parent);
      expect(names).not.toContain(stale);
      expect(names).toContain(live);
    }
    for (const parent of parents) await rmdir(path.join(parent, live));
  });
});

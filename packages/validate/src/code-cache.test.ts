import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { adoptRewrites, pruneCodeCache, touchRewrites } from './code-cache.js';

const key = (digit: string): string => digit.repeat(64);

describe('the code cache', () => {
  let out: string;
  let cache: string;

  beforeEach(async () => {
    out = await mkdtemp(join(tmpdir(), 'envgen-out-'));
    cache = join(await mkdtemp(join(tmpdir(), 'envgen-cache-')), 'code-cache');
  });

  afterEach(async () => {
    await rm(out, { recursive: true, force: true });
    await rm(join(cache, '..'), { recursive: true, force: true });
  });

  it('adopts only entries named by a cache key, whatever else the sandbox names', async () => {
    await writeFile(join(out, key('a')), 'code a');
    await writeFile(join(out, 'escape'), 'not a key');
    const adopted = await adoptRewrites(out, cache, [key('a'), '../escape', 'escape', key('b')]);
    expect(adopted).toBe(1);
    expect(await readdir(cache)).toEqual([key('a')]);
  });

  it('drops the least recently used entries past its size, keeping those touched since', async () => {
    for (const [digit, age] of [['a', 30], ['b', 20], ['c', 10]] as const) {
      await writeFile(join(out, key(digit)), 'x'.repeat(100));
      await adoptRewrites(out, cache, [key(digit)]);
      const then = new Date(Date.now() - age * 1000);
      await utimes(join(cache, key(digit)), then, then);
    }
    await touchRewrites(cache, [key('a')]);
    await pruneCodeCache(cache, 200);
    expect((await readdir(cache)).sort()).toEqual([key('a'), key('c')]);
  });
});

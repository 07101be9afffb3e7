import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openPool } from '@envgen/pool';
import type { Pool } from '@envgen/pool';
import { makeSyntheticBundle, makeSyntheticInstance, makeSyntheticTask, scratchBase } from '@envgen/pool/test-support';
import { createGoldCache } from './gold-cache.js';

const homes: string[] = [];
const pools: Pool[] = [];

afterEach(() => {
  for (const pool of pools.splice(0)) pool.close();
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

function poolWith(count: number, tasks: number): { home: string; pool: Pool; ids: string[] } {
  const home = mkdtempSync(join(scratchBase(), 'envgen-gold-cache-'));
  homes.push(home);
  const pool = openPool(home);
  pools.push(pool);
  const ids: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const instance = makeSyntheticInstance(index);
    pool.addInstance(instance, makeSyntheticBundle(instance));
    if (index < tasks) pool.putTask(makeSyntheticTask(instance));
    ids.push(instance.instance_id);
  }
  return { home, pool, ids };
}

const goldOn = (file: string, entity: string) => [
  { file, changes: { edited_entities: [`${file}:${entity}`], edited_modules: [`${file}:${entity}`], added_entities: [], added_modules: [] } },
];

describe('createGoldCache', () => {
  it("answers found with the task's gold, no-task, or unknown-instance", () => {
    const { pool, ids } = poolWith(2, 1);
    const cache = createGoldCache(pool);
    expect(cache.lookup(ids[0] ?? '')).toEqual({ status: 'found', gold: goldOn('toolz/core.py', 'add') });
    expect(cache.lookup(ids[1] ?? '')).toEqual({ status: 'no-task' });
    expect(cache.lookup('nobody__nothing.00000000.x__00000000')).toEqual({ status: 'unknown-instance' });
    expect(cache.size).toBe(1);
  });

  it('sees a task rebuilt or built by another connection on the next lookup', () => {
    const { home, pool, ids } = poolWith(2, 1);
    const cache = createGoldCache(pool);
    const [first = '', second = ''] = ids;
    expect(cache.lookup(first)).toMatchObject({ gold: goldOn('toolz/core.py', 'add') });
    // Outcomes this connection records keep the cache valid.
    pool.recordAttempt(first, { reward: 1, solved: false });
    expect(cache.lookup(first)).toMatchObject({ status: 'found' });

    const other = openPool(home);
    pools.push(other);
    other.putTask(makeSyntheticTask(makeSyntheticInstance(0), { file_changes: goldOn('toolz/other.py', 'sub') }));
    expect(cache.lookup(first)).toEqual({ status: 'found', gold: goldOn('toolz/other.py', 'sub') });
    other.putTask(makeSyntheticTask(makeSyntheticInstance(1)));
    expect(cache.lookup(second)).toEqual({ status: 'found', gold: goldOn('toml/core.py', 'add') });
  });

  it('keeps at most maxEntries, dropping the least recently used', () => {
    const { pool, ids } = poolWith(4, 4);
    const cache = createGoldCache(pool, { maxEntries: 2 });
    const [a = '', b = '', c = ''] = ids;
    cache.lookup(a);
    cache.lookup(b);
    cache.lookup(a); // a is now the most recent
    cache.lookup(c); // evicts b
    expect(cache.size).toBe(2);
    // Proven through the pool: a rebuild on this very connection (no data version change)
    // is seen only by entries that were evicted.
    pool.putTask(makeSyntheticTask(makeSyntheticInstance(0), { file_changes: goldOn('x.py', 'a2') }));
    pool.putTask(makeSyntheticTask(makeSyntheticInstance(1), { file_changes: goldOn('x.py', 'b2') }));
    expect(cache.lookup(a)).toMatchObject({ gold: goldOn('toolz/core.py', 'add') });
    expect(cache.lookup(b)).toMatchObject({ gold: goldOn('x.py', 'b2') });
  });

  it('reads the pool every time with maxEntries 0', () => {
    const { pool, ids } = poolWith(1, 1);
    const cache = createGoldCache(pool, { maxEntries: 0 });
    cache.lookup(ids[0] ?? '');
    expect(cache.size).toBe(0);
    pool.putTask(makeSyntheticTask(makeSyntheticInstance(0), { file_changes: goldOn('y.py', 'g') }));
    expect(cache.lookup(ids[0] ?? '')).toMatchObject({ gold: goldOn('y.py', 'g') });
  });
});

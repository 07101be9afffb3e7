import type { FileChanges } from '@envgen/core';
import type { Pool } from '@envgen/pool';

/** What a gold lookup found. */
export type GoldLookup =
  | { status: 'found'; gold: readonly FileChanges[] }
  /** The instance is in the pool but its task (and so its gold) is not built yet. */
  | { status: 'no-task' }
  | { status: 'unknown-instance' };

/** Options of {@link createGoldCache}. */
export interface GoldCacheOptions {
  /** Entries kept, least recently used dropped first; 0 reads the pool on every lookup. Default 10 000. */
  maxEntries?: number;
}

/** Gold localizations by instance id, read from the pool's tasks. */
export interface GoldCache {
  lookup(instanceId: string): GoldLookup;
  /** Entries held now. */
  readonly size: number;
}

interface Entry {
  gold: readonly FileChanges[];
  /** The pool's data version when the entry was read. */
  version: number;
}

/**
 * An LRU cache of gold by instance id that is never stale: each entry remembers the pool's
 * data version (which changes whenever another connection commits, e.g. `envgen tasks
 * --rebuild` in another process) and is read again once that moved. The service itself
 * only writes outcomes, on its own connection, so its writes keep the cache warm.
 */
export function createGoldCache(pool: Pool, options: GoldCacheOptions = {}): GoldCache {
  const maxEntries = options.maxEntries ?? 10_000;
  const entries = new Map<string, Entry>();

  const read = (instanceId: string): GoldLookup => {
    const task = pool.getTask(instanceId);
    if (task !== undefined) return { status: 'found', gold: task.file_changes };
    return pool.hasInstance(instanceId) ? { status: 'no-task' } : { status: 'unknown-instance' };
  };

  return {
    get size() {
      return entries.size;
    },
    lookup(instanceId) {
      if (maxEntries <= 0) return read(instanceId);
      const version = pool.dataVersion();
      const cached = entries.get(instanceId);
      if (cached !== undefined) {
        entries.delete(instanceId);
        if (cached.version === version) {
          // Re-inserting moves the entry to the end: Map order is the recency order.
          entries.set(instanceId, cached);
          return { status: 'found', gold: cached.gold };
        }
      }
      const found = read(instanceId);
      if (found.status !== 'found') return found;
      entries.set(instanceId, { gold: found.gold, version });
      if (entries.size > maxEntries) {
        const oldest = entries.keys().next();
        if (!oldest.done) entries.delete(oldest.value);
      }
      return found;
    },
  };
}

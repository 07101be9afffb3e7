/** Values made once while their key is among those asked for last (see {@link recentCache}). */
export interface RecentCache<K, V> {
  /** The value kept for `key`, or `make()`'s, kept from now on; either way `key` becomes the latest. */
  get(key: K, make: () => V): V;
}

/**
 * A least-recently-used cache: the entries asked for last, up to `capacity` in all, each
 * weighing `weigh(key)` (1 by default, so `capacity` counts entries); the oldest go first, and
 * the latest stays even when it alone weighs more. For what is parsed from a text many times
 * in a row: the trees and entities of the few files one run reads over and over.
 */
export function recentCache<K, V>(capacity: number, weigh: (key: K) => number = () => 1): RecentCache<K, V> {
  const entries = new Map<K, V>();
  let total = 0;
  return {
    get(key, make) {
      let value: V;
      if (entries.has(key)) {
        value = entries.get(key) as V;
        entries.delete(key);
      } else {
        value = make();
        total += weigh(key);
        for (const oldest of entries.keys()) {
          if (total <= capacity) break;
          entries.delete(oldest);
          total -= weigh(oldest);
        }
      }
      entries.set(key, value);
      return value;
    },
  };
}

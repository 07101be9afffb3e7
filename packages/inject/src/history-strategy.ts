import { revertEntity } from '@envgen/mutate';
import type { Strategy } from '@envgen/mutate';

/** A past version of a source file (from `collectHistoricalVersions` in @envgen/repo). */
export interface PastVersion {
  path: string;
  commit: string;
  source: string;
}

/** Name of the history-reversion strategy. */
export const HISTORY_STRATEGY = 'history_revert';

/**
 * History reversion as a strategy: re-applies the old version of a function or method from
 * a past commit onto today's code. Past versions are drawn in seeded order; the first one
 * whose entity differs (not only in comments or whitespace) and still parses is the edit.
 */
export function createHistoryStrategy(versions: readonly PastVersion[]): Strategy {
  const byPath = new Map<string, PastVersion[]>();
  for (const version of versions) byPath.set(version.path, [...(byPath.get(version.path) ?? []), version]);
  return {
    name: HISTORY_STRATEGY,
    family: 'history',
    appliesTo: ['function', 'method'],
    apply({ source, entity, path, rng }) {
      for (const version of rng.shuffle(byPath.get(path) ?? [])) {
        const edit = revertEntity({ source, entity, oldSource: version.source, origin: `commit ${version.commit.slice(0, 8)}` });
        if (edit !== null) return edit;
      }
      return null;
    },
  };
}

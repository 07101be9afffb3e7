import { createHash } from 'node:crypto';
import type { Logger, StrategyFamily } from '@envgen/core';
import type { Band, GroupCount, Pool, PoolFilter } from '@envgen/pool';
import type { ExportEntry } from './rows.js';

/** Which instances an export covers; absent fields match everything. */
export interface ExportFilter {
  /** `owner/name`. */
  repo?: string;
  strategy?: string;
  family?: StrategyFamily;
  /** Only instances in these difficulty bands, after `minAttempts` attempts (default 1). */
  bands?: Band[];
  minAttempts?: number;
}

/** At most this many example ids are kept per skip reason (the counts are always complete). */
const MAX_EXAMPLES = 10;

/** What a selection left out, and what it let through per repo, strategy and statement kind. */
export interface SelectionTally {
  /** Matching instances without a task (the task builder has not run on them), counted while reading. */
  noTask: number;
  /** Instances whose problem statement is empty or blank: never exported. */
  emptyStatement: number;
  /** Instances whose patch an earlier instance (in `instance_id` order) already has. */
  duplicatePatch: number;
  /** Up to ten ids per reason, for the log and the report. */
  examples: { emptyStatement: string[]; duplicatePatch: string[] };
  /** Instances let through. */
  selected: number;
  byRepo: Map<string, number>;
  byStrategy: Map<string, number>;
  byStatementKind: Map<string, number>;
}

/** A stream of exportable instances with its running tally. */
export interface Selection {
  /** Instances matching the filter, with a task or not: how many rows {@link entries} reads. */
  readonly candidates: number;
  readonly tally: SelectionTally;
  /** Exportable entries in `instance_id` order, read from the pool a page at a time. Iterate once; the tally is complete after. */
  readonly entries: Iterable<ExportEntry>;
}

function poolFilter(filter: ExportFilter): PoolFilter {
  return {
    ...(filter.repo === undefined ? {} : { repo: filter.repo }),
    ...(filter.strategy === undefined ? {} : { strategy: filter.strategy }),
    ...(filter.family === undefined ? {} : { family: filter.family }),
    ...(filter.bands === undefined ? {} : { bands: filter.bands }),
    ...(filter.minAttempts === undefined ? {} : { minAttempts: filter.minAttempts }),
  };
}

/** Counts as the pool reports them: largest first, ties by key. */
export function toGroupCounts(counts: ReadonlyMap<string, number>): GroupCount[] {
  return [...counts]
    .map(([key, count]) => ({ key, count }))
    .sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

function increment(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/**
 * Selects what an export writes: the pool's instances with a task, in `instance_id` order,
 * minus those with a blank problem statement and those whose patch was already selected
 * (the pool dedupes per repo and commit; an export never writes one patch twice at all).
 * Memory: one 44-byte patch digest per selected instance, nothing else per row.
 */
export function selectEntries(pool: Pool, filter: ExportFilter, logger: Logger): Selection {
  const base = poolFilter(filter);
  const tally: SelectionTally = {
    noTask: 0,
    emptyStatement: 0,
    duplicatePatch: 0,
    examples: { emptyStatement: [], duplicatePatch: [] },
    selected: 0,
    byRepo: new Map(),
    byStrategy: new Map(),
    byStatementKind: new Map(),
  };
  const seenPatches = new Set<string>();
  function* entries(): Generator<ExportEntry> {
    // One listing of every match, counting those without a task on the way: a separate
    // pool.count per kind scans the whole index table (seconds at 100k instances).
    for (const { instance, task } of pool.listInstances(base)) {
      const id = instance.instance_id;
      if (task === null) {
        tally.noTask += 1;
        continue;
      }
      if (task.problem_statement.text.trim() === '') {
        tally.emptyStatement += 1;
        if (tally.examples.emptyStatement.length < MAX_EXAMPLES) tally.examples.emptyStatement.push(id);
        logger.warn(`export: skipped ${id}: its problem statement is empty; rebuild its task with envgen tasks`, { instance: id });
        continue;
      }
      const patchKey = createHash('sha256').update(instance.patch).digest('base64');
      if (seenPatches.has(patchKey)) {
        tally.duplicatePatch += 1;
        if (tally.examples.duplicatePatch.length < MAX_EXAMPLES) tally.examples.duplicatePatch.push(id);
        logger.debug(`export: skipped ${id}: an earlier instance has the same patch`, { instance: id });
        continue;
      }
      seenPatches.add(patchKey);
      tally.selected += 1;
      increment(tally.byRepo, instance.repo);
      increment(tally.byStrategy, instance.strategy);
      increment(tally.byStatementKind, task.problem_statement.kind);
      yield { instance, task };
    }
  }
  return { candidates: pool.count(base), tally, entries: entries() };
}

import { createHash } from 'node:crypto';

/** Options of {@link chooseCheckpoints}. */
export interface CheckpointChoiceOptions {
  /** Node ids in the baseline's run order. */
  order: readonly string[];
  /** Entity key → node ids that ran it (only keys of entities a candidate may change). */
  coverage: Readonly<Record<string, readonly string[]>>;
  /** Tests that run with every change (they start processes, whose code no tracer sees). */
  alwaysRun: ReadonlySet<string>;
  /** Most checkpoints to ask for. */
  count: number;
}

/** Node id → position in the run order. */
export function positionsOf(order: readonly string[]): Map<string, number> {
  return new Map(order.map((nodeId, index) => [nodeId, index]));
}

/**
 * Position in the run order of the first test that can observe a change to the entities
 * `keys` (one that ran them, or one that starts processes), or null when none is in the
 * order. Every test before it runs exactly as on the clean tree.
 */
export function firstObserver(
  keys: readonly string[],
  coverage: Readonly<Record<string, readonly string[]>>,
  alwaysRun: ReadonlySet<string>,
  positions: ReadonlyMap<string, number>,
): number | null {
  let first: number | null = null;
  for (const nodeId of [...keys.flatMap((key) => coverage[key] ?? []), ...alwaysRun]) {
    const position = positions.get(nodeId);
    if (position !== undefined && (first === null || position < first)) first = position;
  }
  return first;
}

/**
 * The tests to leave checkpoints at: evenly spread quantiles of where the covered entities'
 * first observers sit, so a candidate's run goes on close to its first observer whichever
 * entity it changes. In run order, without repeats, at most `count`.
 */
export function chooseCheckpoints(options: CheckpointChoiceOptions): string[] {
  const positions = positionsOf(options.order);
  const starts = new Set<number>();
  for (const key of Object.keys(options.coverage)) {
    const start = firstObserver([key], options.coverage, options.alwaysRun, positions);
    if (start !== null) starts.add(start);
  }
  const sorted = [...starts].sort((a, b) => a - b);
  const chosen = new Set<number>();
  for (let index = 0; index < Math.min(options.count, sorted.length); index++) {
    chosen.add(sorted[Math.floor((index * sorted.length) / Math.min(options.count, sorted.length))] as number);
  }
  return [...chosen].sort((a, b) => a - b).map((position) => options.order[position] as string);
}

/** Index of the latest usable checkpoint at or before `start` (positions, null when unusable), or -1. */
export function pickCheckpoint(checkpointPositions: readonly (number | null)[], start: number): number {
  let best = -1;
  checkpointPositions.forEach((position, index) => {
    if (position !== null && position <= start && (best === -1 || position >= (checkpointPositions[best] as number))) best = index;
  });
  return best;
}

/** sha256 of node ids joined by newlines, as the warm collector reports its collection. */
export function orderDigest(order: readonly string[]): string {
  return createHash('sha256').update(order.join('\n')).digest('hex');
}

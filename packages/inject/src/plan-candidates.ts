import { createRng } from '@envgen/core';
import type { Candidate } from '@envgen/core';
import { applyStrategy } from '@envgen/mutate';
import type { DropReason, Strategy } from '@envgen/mutate';
import { makePatch } from '@envgen/patch';
import type { PatchedFile } from '@envgen/patch';
import type { Site, SourceFile } from './sites.js';

/** A candidate bug and the file contents it changes (clean → buggy). */
export interface PlannedCandidate {
  kind: 'candidate';
  candidate: Candidate;
  files: PatchedFile[];
}

/** An attempt dropped before any test ran. */
export interface DroppedAttempt {
  kind: 'dropped';
  strategy: string;
  reason: DropReason | 'duplicate' | 'ran-at-collection';
}

export interface PlanCandidatesOptions {
  files: readonly SourceFile[];
  sites: readonly Site[];
  strategies: readonly Strategy[];
  seed: number;
  /** Give up after this many dropped attempts in a row (the sites are exhausted). */
  maxConsecutiveDrops?: number;
}

/**
 * Whether the edit from `before` to `after` changes one of `lines` (1-based, of `before`): the
 * lines between the common first and last lines (where it only inserts, the line before).
 */
export function changesAny(before: string, after: string, lines: ReadonlySet<number>): boolean {
  const [old, now] = [before.split('\n'), after.split('\n')];
  let head = 0;
  while (head < old.length && head < now.length && old[head] === now[head]) head++;
  let tail = 0;
  while (tail < old.length - head && tail < now.length - head && old[old.length - 1 - tail] === now[now.length - 1 - tail]) tail++;
  const last = old.length - tail;
  // The changed lines of `before` are head+1..last; an edit that only inserts changes none, so the line before it counts.
  const [first, end] = last > head ? [head + 1, last] : [head, head];
  for (let line = first; line <= end; line++) if (lines.has(line)) return true;
  return false;
}

/** Sites a strategy may try in one turn before the next strategy's turn. */
const TRIES_PER_TURN = 8;

function pickWeighted<T extends { weight: number }>(items: readonly T[], draw: number): T {
  const total = items.reduce((sum, item) => sum + item.weight, 0);
  let left = draw * total;
  for (const item of items) {
    left -= item.weight;
    if (left < 0) return item;
  }
  return items[items.length - 1] as T;
}

/**
 * Candidate bugs, lazily and deterministically for a seed: strategies take turns; each turn
 * picks a site the strategy applies to (weighted toward cheap covering tests), applies the
 * strategy with its own seed, and yields the candidate, or the reason it was dropped
 * (syntax error, unchanged tree, no site, or a patch seen before). The sequence depends
 * only on the inputs, so the same seed always proposes the same bugs in the same order.
 */
export function* planCandidates(options: PlanCandidatesOptions): Generator<PlannedCandidate | DroppedAttempt> {
  const rng = createRng(options.seed);
  const sources = new Map(options.files.map((file) => [file.path, file]));
  const eligible = options.strategies
    .map((strategy) => ({ strategy, sites: options.sites.filter((site) => strategy.appliesTo.includes(site.entity.kind)) }))
    .filter((entry) => entry.sites.length > 0);
  const limit = options.maxConsecutiveDrops ?? 50 * Math.max(eligible.length, 1);
  const seen = new Set<string>();
  let drops = 0;
  while (eligible.length > 0 && drops < limit) {
    for (const { strategy, sites } of eligible) {
      // A strategy keeps its turn until it proposes something (or runs out of tries), so
      // operators with few sites still get their share of the candidates.
      for (let attempt = 0; attempt < TRIES_PER_TURN && drops < limit; attempt++) {
        const site = pickWeighted(sites, rng.next());
        const seed = rng.int(2 ** 32);
        const file = sources.get(site.path);
        const source = file?.source ?? '';
        const executedLines = site.executedLines ?? file?.executedLines;
        const outcome = applyStrategy(strategy, { source, entity: site.entity, path: site.path, rng: createRng(seed), ...(executedLines ? { executedLines } : {}) });
        if (outcome.status === 'dropped') {
          drops += 1;
          yield { kind: 'dropped', strategy: strategy.name, reason: outcome.reason };
          continue;
        }
        if (site.keepLines !== undefined && changesAny(source, outcome.edit.newSource, site.keepLines)) {
          drops += 1;
          yield { kind: 'dropped', strategy: strategy.name, reason: 'ran-at-collection' };
          continue;
        }
        const files = [{ path: site.path, before: source, after: outcome.edit.newSource }];
        const patch = makePatch(files);
        if (seen.has(patch)) {
          drops += 1;
          yield { kind: 'dropped', strategy: strategy.name, reason: 'duplicate' };
          continue;
        }
        seen.add(patch);
        drops = 0;
        yield {
          kind: 'candidate',
          candidate: { strategy: strategy.name, family: strategy.family, seed, patch, entities: [site.key], description: `${outcome.edit.description} in ${site.key}` },
          files,
        };
        break;
      }
    }
  }
}

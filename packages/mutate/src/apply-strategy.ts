import { setImmediate as turnEventLoop } from 'node:timers/promises';
import { createRng, sha256 } from '@envgen/core';
import { parsePython, sameSyntaxTree } from '@envgen/python';
import type { Entity } from '@envgen/python';
import { parseCached } from './entity-node.js';
import type { DropReason, MutationEdit, Strategy, StrategyFamily, StrategyInput, StrategyOutcome } from './types.js';

/**
 * Runs one strategy and re-parses its output: an edit is kept only when it parses without
 * syntax errors and its syntax tree differs from the original (not a comment or whitespace
 * change). An entity of a kind the strategy does not handle has no site.
 */
export function applyStrategy(strategy: Strategy, input: StrategyInput): StrategyOutcome {
  if (!strategy.appliesTo.includes(input.entity.kind)) return { status: 'dropped', reason: 'no-site' };
  const edit = strategy.apply(input);
  if (edit === null) return { status: 'dropped', reason: 'no-site' };
  const edited = parsePython(edit.newSource);
  if (edited.rootNode.hasError) return { status: 'dropped', reason: 'syntax-error' };
  if (sameSyntaxTree(parseCached(input.source), edited)) return { status: 'dropped', reason: 'unchanged-tree' };
  return { status: 'kept', edit };
}

/** What {@link generateCandidates} mutates and how often. */
export interface GenerateCandidatesOptions {
  source: string;
  /** Repo-relative path of the file. */
  path: string;
  /** Entities extracted from `source`; each is tried with every strategy that applies to its kind. */
  entities: readonly Entity[];
  strategies: readonly Strategy[];
  seed: number | string;
  /** Tries per entity and strategy, each with its own seed (default 1). */
  attempts?: number;
}

/** Why generateCandidates dropped an attempt: the strategy's reasons, or an edit seen before. */
export type CandidateDropReason = DropReason | 'duplicate';

/** One attempt of one strategy on one entity; `createRng(seed)` recreates it. */
export type MutationCandidate = {
  strategy: string;
  family: StrategyFamily;
  path: string;
  /** Qualified name of the mutated entity. */
  entity: string;
  seed: number;
} & ({ status: 'kept'; edit: MutationEdit } | { status: 'dropped'; reason: CandidateDropReason });

/**
 * Tries every applicable strategy on every entity of one file, `attempts` times each, and
 * reports every attempt: kept edits (each distinct new source once) and dropped ones with
 * their reason. Deterministic for a given seed.
 *
 * Async because tree-sitter's node binding frees a parsed tree's native memory only from a
 * finalizer that runs when the event loop turns: a synchronous loop over a large file would
 * hold every tree it parsed (gigabytes on a 2,600-line module).
 */
export async function generateCandidates(options: GenerateCandidatesOptions): Promise<MutationCandidate[]> {
  const { source, path, entities, strategies } = options;
  const attempts = options.attempts ?? 1;
  const seen = new Set<string>();
  const candidates: MutationCandidate[] = [];
  for (const entity of entities) {
    for (const strategy of strategies) {
      if (!strategy.appliesTo.includes(entity.kind)) continue;
      for (let attempt = 0; attempt < attempts; attempt++) {
        // A numeric seed per attempt (the Candidate contract stores numbers), stable across runs.
        const label = `${String(options.seed)}/${path}/${entity.qualifiedName}/${strategy.name}/${attempt}`;
        const seed = Number.parseInt(sha256(label).slice(0, 8), 16);
        const base = { strategy: strategy.name, family: strategy.family, path, entity: entity.qualifiedName, seed };
        const outcome = applyStrategy(strategy, { source, entity, path, rng: createRng(seed) });
        await turnEventLoop();
        if (outcome.status === 'kept' && seen.has(outcome.edit.newSource)) {
          candidates.push({ ...base, status: 'dropped', reason: 'duplicate' });
          continue;
        }
        if (outcome.status === 'kept') seen.add(outcome.edit.newSource);
        candidates.push({ ...base, ...outcome });
      }
    }
  }
  return candidates;
}

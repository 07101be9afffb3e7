import { createRng } from '@envgen/core';
import { extractEntities } from '@envgen/python';
import { expect } from 'vitest';
import { applyStrategy } from './apply-strategy.js';
import { STRATEGIES } from './registry.js';
import type { StrategyOutcome } from './types.js';

/** Runs the named strategy on one entity of `source` (found by qualified name) with a numeric seed. */
export function mutate(strategy: string, source: string, qualifiedName: string, seed: number): StrategyOutcome {
  const entity = extractEntities(source, 'mod.py').entities.find((candidate) => candidate.qualifiedName === qualifiedName);
  const chosen = STRATEGIES[strategy];
  if (entity === undefined || chosen === undefined) throw new Error(`no entity ${qualifiedName} or strategy ${strategy}`);
  return applyStrategy(chosen, { source, entity, path: 'mod.py', rng: createRng(seed) });
}

/** The new source of a kept edit (fails the test when the edit was dropped). */
export function mutated(strategy: string, source: string, qualifiedName: string, seed: number): string {
  const outcome = mutate(strategy, source, qualifiedName, seed);
  expect(outcome).toMatchObject({ status: 'kept' });
  return outcome.status === 'kept' ? outcome.edit.newSource : '';
}

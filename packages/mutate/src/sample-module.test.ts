import { setImmediate as turnEventLoop } from 'node:timers/promises';
import { createRng } from '@envgen/core';
import { extractEntities, hasSyntaxErrors, sameSyntaxTree } from '@envgen/python';
import { describe, expect, it } from 'vitest';
import { applyStrategy } from './apply-strategy.js';
import { selectStrategies } from './registry.js';
import { SAMPLE_MODULE } from './sample-module.fixture.js';

const SEEDS = [1, 2, 3, 4, 5];

describe('every strategy on a real-ish module', () => {
  const { entities, hasErrors } = extractEntities(SAMPLE_MODULE, 'inventory.py');

  it('parses the fixture cleanly', () => {
    expect(hasErrors).toBe(false);
    expect(entities.map((entity) => entity.qualifiedName)).toContain('Inventory.load');
  });

  it('never throws, and every edit a strategy makes parses and changes the syntax tree', async () => {
    const kept = new Map<string, number>();
    for (const strategy of selectStrategies()) {
      for (const entity of entities.filter((candidate) => strategy.appliesTo.includes(candidate.kind))) {
        for (const seed of SEEDS) {
          // The raw strategy output, before applyStrategy's own checks: no operator should ever need them here.
          const edit = strategy.apply({ source: SAMPLE_MODULE, entity, path: 'inventory.py', rng: createRng(seed) });
          // Let tree-sitter's finalizers free the trees parsed so far (see generateCandidates).
          await turnEventLoop();
          if (edit === null) continue;
          expect(hasSyntaxErrors(edit.newSource), `${strategy.name} on ${entity.qualifiedName}: ${edit.description}`).toBe(false);
          expect(sameSyntaxTree(SAMPLE_MODULE, edit.newSource), `${strategy.name}: ${edit.description}`).toBe(false);
          expect(edit.description.length).toBeGreaterThan(0);
          kept.set(strategy.name, (kept.get(strategy.name) ?? 0) + 1);
        }
      }
    }
    // The module has a site for every operator, and every operator produced a valid edit.
    expect([...kept.keys()].sort()).toEqual(selectStrategies().map((strategy) => strategy.name).sort());
  }, 120_000);

  it('leaves code outside the mutated entity untouched', () => {
    for (const strategy of selectStrategies()) {
      for (const entity of entities) {
        const outcome = applyStrategy(strategy, { source: SAMPLE_MODULE, entity, path: 'inventory.py', rng: createRng(9) });
        if (outcome.status !== 'kept') continue;
        const before = Buffer.from(SAMPLE_MODULE);
        const after = Buffer.from(outcome.edit.newSource);
        const tail = before.length - entity.endByte;
        expect(after.subarray(0, entity.startByte).equals(before.subarray(0, entity.startByte))).toBe(true);
        expect(after.subarray(after.length - tail).equals(before.subarray(before.length - tail))).toBe(true);
      }
    }
  });
});

import { describe, expect, it } from 'vitest';
import { createRng } from '@envgen/core';
import { applyStrategy } from '@envgen/mutate';
import { extractEntities } from '@envgen/python';
import { createHistoryStrategy } from './history-strategy.js';

const TODAY = 'def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n\n\ndef area(w, h):\n    return w * h\n';
const PAST = 'def clamp(x, lo, hi):\n    return min(lo, max(x, hi))\n\n\ndef area(w, h):\n    # old comment\n    return w * h\n';

describe('createHistoryStrategy', () => {
  const strategy = createHistoryStrategy([{ path: 'calc.py', commit: 'a'.repeat(40), source: PAST }]);
  const entities = extractEntities(TODAY, 'calc.py').entities;
  const entity = (name: string) => entities.find((candidate) => candidate.qualifiedName === name);

  it('brings back the past body of a function that changed', () => {
    const outcome = applyStrategy(strategy, { source: TODAY, entity: entity('clamp')!, path: 'calc.py', rng: createRng(1) });
    expect(outcome.status).toBe('kept');
    if (outcome.status === 'kept') {
      expect(outcome.edit.newSource).toBe('def clamp(x, lo, hi):\n    return min(lo, max(x, hi))\n\n\ndef area(w, h):\n    return w * h\n');
      expect(outcome.edit.description).toContain('aaaaaaaa');
    }
  });

  it('has no site where the past differs only in comments, or for files without history', () => {
    expect(applyStrategy(strategy, { source: TODAY, entity: entity('area')!, path: 'calc.py', rng: createRng(1) })).toEqual({ status: 'dropped', reason: 'no-site' });
    expect(applyStrategy(strategy, { source: TODAY, entity: entity('clamp')!, path: 'other.py', rng: createRng(1) })).toEqual({ status: 'dropped', reason: 'no-site' });
  });
});

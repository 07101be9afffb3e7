import { describe, expect, it } from 'vitest';
import { createRng } from '@envgen/core';
import { applyPatch, makePatch } from '@envgen/patch';
import { combineCandidates } from './combine-candidates.js';
import type { CombinableBug } from './combine-candidates.js';
import { GEOMETRY } from './inject-fixtures.fixture.js';

function bug(id: string, from: string, to: string, path = 'geo.py'): CombinableBug {
  const after = GEOMETRY.replace(from, to);
  const files = [{ path, before: GEOMETRY, after }];
  return { instanceId: id, files, candidate: { strategy: 'change_operator', family: 'procedural', seed: 1, patch: makePatch(files), entities: [`${path}:${id}`], description: id } };
}

describe('combineCandidates', () => {
  it('merges bugs of one file into one candidate that carries every change', () => {
    const bugs = [
      bug('a', 'return 0\n', 'return 1\n'),
      bug('b', 'self.side * self.side', 'self.side + self.side'),
      bug('c', 'total + shape.area()', 'total - shape.area()'),
    ];
    const [combined] = combineCandidates(bugs, createRng(1), { count: 1 });
    expect(combined?.candidate.strategy).toBe('combine');
    expect(combined?.candidate.family).toBe('combine');
    const parents = combined?.candidate.parents ?? [];
    expect(parents.length).toBeGreaterThanOrEqual(2);
    const applied = applyPatch((path) => (path === 'geo.py' ? GEOMETRY : null), combined?.candidate.patch ?? '');
    expect(applied.ok).toBe(true);
    const after = applied.ok ? (applied.files[0]?.after ?? '') : '';
    if (parents.includes('a')) expect(after).toContain('return 1\n');
    if (parents.includes('b')) expect(after).toContain('self.side + self.side');
    if (parents.includes('c')) expect(after).toContain('total - shape.area()');
    expect(combined?.candidate.entities).toEqual(parents.map((id) => `geo.py:${id}`).sort());
  });

  it('skips bugs whose changes collide and files with a single bug', () => {
    const colliding = [bug('a', 'self.side * self.side', 'self.side + self.side'), bug('b', 'self.side * self.side', 'self.side - self.side')];
    expect(combineCandidates(colliding, createRng(2), { count: 3 })).toEqual([]);
    expect(combineCandidates([bug('a', 'return 0\n', 'return 1\n'), bug('z', 'return 0\n', 'return 2\n', 'other.py')], createRng(2), { count: 3 })).toEqual([]);
  });
});
